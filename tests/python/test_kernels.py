"""The (primitive, device) kernel table behind every op (docs/ENGINE.md, Note [The
compute seam]): every primitive has a CPU kernel, and a CUDA build has a CUDA kernel
for every primitive not on the allowlist below, which only shrinks."""

import pytest

import lucid

# Primitives without a CUDA kernel yet (issue 19). A primitive that gains one must
# leave this list: the test checks the list exactly, both ways.
CUDA_PENDING = {
    "ProdRows", "RowStat", "ScanDim",                                    # prod, var of complex/ints, logsumexp, p-norms, cumsum/cumprod
    "Conj",
    "ConvForward", "ConvTranspose", "ConvWeightGrad", "Im2Col", "Col2Im",  # convolution (cuDNN)
    "Scatter", "IndexAdd", "IndexPut",
    "CountNonzero", "Nonzero",
    "NormMoments", "NormAffine", "NormGradSums", "NormAffine2", "BatchNormStats",
    "BatchNormGradCoeffs", "GroupNormStats", "GroupNormGradCoeffs",
    "NormRows", "NormRowsBackward", "LstmCell", "LstmCellBackward", "GruCell", "GruCellBackward",
    "LstmLayer", "LstmLayerBackward", "GruLayer", "GruLayerBackward", "CtcLoss", "CtcLossBackward",
    "OptimStep",
}


def _kernels(device):
    return {prim for prim, dev in lucid._C._kernels() if dev == device}


def test_every_primitive_has_a_cpu_kernel():
    assert set(lucid._C._primitives()) - _kernels("cpu") == set()


def test_primitive_names_are_unique():
    names = lucid._C._primitives()
    assert len(names) == len(set(names)) and "Binary" in names


def test_the_pending_list_names_primitives():
    assert CUDA_PENDING <= set(lucid._C._primitives())


@pytest.mark.skipif(not lucid._C._built_with_cuda, reason="lucid was built without CUDA")
def test_every_primitive_has_a_cuda_kernel_but_the_pending_ones():
    missing = set(lucid._C._primitives()) - _kernels("gpu")
    assert missing == CUDA_PENDING, (
        f"no CUDA kernel and not listed: {sorted(missing - CUDA_PENDING)}; "
        f"listed but has one now (remove from CUDA_PENDING): {sorted(CUDA_PENDING - missing)}")


@pytest.mark.skipif(not lucid.gpu.is_available(), reason="lucid has no GPU here")
def test_a_missing_kernel_names_the_op_and_the_device():
    assert "ScanDim" in CUDA_PENDING  # cumsum's primitive; pick another when it gains a kernel
    with pytest.raises(NotImplementedError, match="no CUDA kernel for cumsum on gpu:0"):
        lucid.cumsum(lucid.ones(3, device="gpu"), 0)
