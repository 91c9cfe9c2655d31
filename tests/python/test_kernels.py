"""The (primitive, device) kernel table behind every op (docs/ENGINE.md, Note [The
compute seam]): every primitive has a CPU kernel, and a CUDA build a CUDA kernel. (A
primitive without one raises NotImplementedError from launch: tests/cpp/test_launch.cpp.)"""

import pytest

import lucid


def _kernels(device):
    return {prim for prim, dev in lucid._C._kernels() if dev == device}


# Primitives that run code only a GPU can: a user's CUDA source (lucid.fast.cuda_kernel).
GPU_ONLY = {"CustomKernel", "FusedNormRows", "FusedNormRowsBackward", "FusedSoftmaxRows", "FusedReduceRows"}


def test_every_primitive_has_a_cpu_kernel():
    assert set(lucid._C._primitives()) - _kernels("cpu") == GPU_ONLY


def test_primitive_names_are_unique():
    names = lucid._C._primitives()
    assert len(names) == len(set(names)) and "Binary" in names


@pytest.mark.skipif(not lucid._C._built_with_cuda, reason="lucid was built without CUDA")
def test_every_primitive_has_a_cuda_kernel():
    assert set(lucid._C._primitives()) - _kernels("gpu") == set()
