"""lucid.fast.cuda_kernel (MLX's mx.fast.cuda_kernel): a user's CUDA kernel body compiled
with NVRTC behind a generated signature, run like any op. The argument checks and the
generated sources' compilation (NVRTC needs no GPU) run everywhere lucid has CUDA; the
launches need a GPU."""

import numpy as np
import pytest

import lucid

GPU = lucid.gpu.is_available()
needs_gpu = pytest.mark.skipif(not GPU, reason="lucid has no GPU here")


def nvrtc_loads():
    try:
        lucid._C.nvrtc_compile('extern "C" __global__ void k() {}', "k", 90, [])
        return True
    except RuntimeError:
        return False


needs_nvrtc = pytest.mark.skipif(not (lucid._C._built_with_cuda and nvrtc_loads()),
                                 reason="NVRTC cannot be loaded here")

EXP = """
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < inp_shape[0]) out[i] = exp(inp[i]);
"""


def exp_kernel():
    return lucid.fast.cuda_kernel("myexp", ["inp"], ["out"], EXP)


class FakeInput:  # what source_for reads of an input: its dtype
    def __init__(self, dtype):
        self.dtype = dtype


def test_the_generated_signature():
    k = exp_kernel()
    source, params, headers = k.source_for([FakeInput(lucid.float32)], [lucid.float32])
    assert 'extern "C" __global__ void myexp(const float* __restrict__ inp, const lucid_dims inp_shape, float* out)' \
        in source
    assert params == [(0, 0), (1, 0), (0, 1)] and not headers
    k2 = lucid.fast.cuda_kernel("k2", ["a", "b"], ["c"], "c[0] = a[a_strides[0]] + T(N) + b[b_ndim];")
    source, params, _ = k2.source_for([FakeInput(lucid.float64), FakeInput(lucid.int32)], [lucid.float64],
                                      template=[("T", lucid.float64), ("N", 3), ("B", True)])
    assert "using T = double;" in source and "constexpr int N = 3;" in source and "constexpr bool B = true;" in source
    assert "(const double* __restrict__ a, const lucid_dims a_strides, const int* __restrict__ b, const int b_ndim, " \
           "double* c)" in source
    assert params == [(0, 0), (2, 0), (0, 1), (3, 1), (0, 2)]
    _, _, headers = k2.source_for([FakeInput(lucid.float16), FakeInput(lucid.int32)], [lucid.float16])
    assert headers


def test_bad_arguments_raise_before_anything_runs():
    with pytest.raises(ValueError, match="C identifiers"):
        lucid.fast.cuda_kernel("my-exp", ["inp"], ["out"], EXP)
    with pytest.raises(ValueError, match="distinct"):
        lucid.fast.cuda_kernel("k", ["x"], ["x"], EXP)
    k = exp_kernel()
    x = lucid.ones(4)
    with pytest.raises(TypeError, match="expected 1 input tensors"):
        k(inputs=[x, x], output_shapes=[(4,)], output_dtypes=[lucid.float32], grid=(4, 1, 1), threadgroup=(4, 1, 1))
    with pytest.raises(ValueError, match="a shape and a dtype for each"):
        k(inputs=[x], output_shapes=[], output_dtypes=[], grid=(4, 1, 1), threadgroup=(4, 1, 1))
    with pytest.raises(ValueError, match="at most 1024 threads"):
        k(inputs=[x], output_shapes=[(4,)], output_dtypes=[lucid.float32], grid=(4, 1, 1), threadgroup=(64, 32, 1))
    with pytest.raises(ValueError, match="3 positive ints"):
        k(inputs=[x], output_shapes=[(4,)], output_dtypes=[lucid.float32], grid=(0, 1, 1), threadgroup=(4, 1, 1))
    with pytest.raises(RuntimeError, match="runs on the GPU"):
        k(inputs=[lucid.ones(4, device="cpu")], output_shapes=[(4,)], output_dtypes=[lucid.float32], grid=(4, 1, 1), threadgroup=(4, 1, 1))
    with pytest.raises(TypeError, match="complex64"):
        k.source_for([FakeInput(lucid.complex64)], [lucid.float32])
    with pytest.raises(TypeError, match="template argument T"):
        k.source_for([FakeInput(lucid.float32)], [lucid.float32], template=[("T", 1.5)])


@needs_nvrtc
def test_generated_sources_compile():
    k = exp_kernel()
    source, _, _ = k.source_for([FakeInput(lucid.float32)], [lucid.float32])
    assert len(lucid._C.nvrtc_compile(source, "myexp", 90, ["--std=c++17"])) > 0
    half = lucid.fast.cuda_kernel("h", ["a"], ["b"], "b[threadIdx.x] = __hadd(a[threadIdx.x], a[threadIdx.x]);")
    source, _, headers = half.source_for([FakeInput(lucid.float16)], [lucid.float16])
    assert headers
    dirs = lucid._C.nvrtc_include_dirs()
    if not dirs:
        pytest.skip("no CUDA toolkit headers here")
    assert len(lucid._C.nvrtc_compile(source, "h", 90, ["--std=c++17"] + [f"-I{d}" for d in dirs])) > 0
    cg = lucid.fast.cuda_kernel("cg", ["a"], ["b"], "b[cooperative_groups::this_grid().thread_rank()] = a[0];")
    source, _, headers = cg.source_for([FakeInput(lucid.float32)], [lucid.float32])
    assert headers and "#include <cooperative_groups.h>" in source
    assert len(lucid._C.nvrtc_compile(source, "cg", 90, ["--std=c++17"] + [f"-I{d}" for d in dirs])) > 0


@needs_nvrtc
def test_a_compile_error_gives_the_compilers_message():
    bad = lucid.fast.cuda_kernel("bad", ["a"], ["b"], "b[0] = a[0] + not_declared;")
    source, _, _ = bad.source_for([FakeInput(lucid.float32)], [lucid.float32])
    with pytest.raises(RuntimeError, match="(?s)NVRTC could not compile bad.*not_declared"):
        lucid._C.nvrtc_compile(source, "bad", 90, ["--std=c++17"])


def run(kernel, inputs, shapes, dtypes, n, **kw):
    return kernel(inputs=inputs, output_shapes=shapes, output_dtypes=dtypes, grid=(n, 1, 1), threadgroup=(128, 1, 1),
                  **kw)


@needs_gpu
def test_mlx_exp_example_and_a_second_call_compiles_nothing():
    x = lucid.linspace(-3, 3, 1000, device="gpu")
    (y,) = run(exp_kernel(), [x], [x.shape], [x.dtype], 1000)
    np.testing.assert_allclose(y.cpu().numpy(), np.exp(x.cpu().numpy()), rtol=1e-6)
    k = exp_kernel()
    run(k, [x], [x.shape], [x.dtype], 1000)
    compiled = lucid.gpu.generated_kernel_stats()["compiled"]
    (y2,) = run(k, [x * 2], [x.shape], [x.dtype], 1000)
    assert lucid.gpu.generated_kernel_stats()["compiled"] == compiled
    np.testing.assert_allclose(y2.cpu().numpy(), np.exp(2 * x.cpu().numpy()), rtol=1e-6)


@needs_gpu
def test_templates_strides_and_lazy_order():
    src = """
        const int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= a_shape[0] * a_shape[1]) return;
        const int r = i / a_shape[1], c = i % a_shape[1];
        out[i] = a[r * a_strides[0] + c * a_strides[1]] * T(SCALE) + (NEG ? -1 : 1) * a_ndim;
    """
    k = lucid.fast.cuda_kernel("strided", ["a"], ["out"], src, ensure_row_contiguous=False)
    base = lucid.arange(12, device="gpu").double().reshape(3, 4)
    a = base.t()  # [4, 3], strides (1, 4)
    base.add_(100.0)  # recorded before the kernel: it must see this write
    (out,) = run(k, [a], [(4, 3)], [lucid.float64], 12, template=[("T", lucid.float64), ("SCALE", 2), ("NEG", True)])
    expected = (np.arange(12.0).reshape(3, 4).T + 100) * 2 - 2
    np.testing.assert_array_equal(out.cpu().numpy().reshape(4, 3), expected)
    # with ensure_row_contiguous the kernel sees the contiguous copy's strides
    k2 = lucid.fast.cuda_kernel("strided2", ["a"], ["out"], src)
    (out2,) = run(k2, [a], [(4, 3)], [lucid.float64], 12, template=[("T", lucid.float64), ("SCALE", 2), ("NEG", True)])
    np.testing.assert_array_equal(out2.cpu().numpy().reshape(4, 3), expected)


@needs_gpu
def test_init_value_atomics_and_half_precision():
    k = lucid.fast.cuda_kernel("total", ["x"], ["s"], """
        const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < x_shape[0]) atomicAdd(s, x[i]);
    """)
    x = lucid.ones(5000, device="gpu")
    (s,) = run(k, [x], [(1,)], [lucid.float32], 5000, init_value=10.0)
    assert s.item() == 5010.0
    h = lucid.fast.cuda_kernel("twice", ["a"], ["b"], """
        const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < a_shape[0]) b[i] = __hadd(a[i], a[i]);
    """)
    a = lucid.linspace(-2, 2, 300, device="gpu").half()
    (b,) = run(h, [a], [a.shape], [lucid.float16], 300)
    np.testing.assert_array_equal(b.float().cpu().numpy(), (a.float() * 2).cpu().numpy())


@needs_gpu
def test_cooperative_groups_as_in_mlx_docs():
    k = lucid.fast.cuda_kernel("cgexp", ["inp"], ["out"], """
        auto elem = cooperative_groups::this_grid().thread_rank();
        if (elem < inp_shape[0]) out[elem] = exp(inp[elem]);
    """)
    x = lucid.linspace(-1, 1, 256, device="gpu")
    (y,) = run(k, [x], [x.shape], [x.dtype], 256)
    np.testing.assert_allclose(y.cpu().numpy(), np.exp(x.cpu().numpy()), rtol=1e-6)


@needs_gpu
def test_a_compile_error_on_the_gpu_raises_and_the_device_still_works():
    bad = lucid.fast.cuda_kernel("broken", ["a"], ["b"], "b[0] = a[0] + undefined_thing;")
    x = lucid.ones(4, device="gpu")
    with pytest.raises(RuntimeError, match="undefined_thing"):
        run(bad, [x], [(1,)], [lucid.float32], 1)
    with pytest.raises(RuntimeError, match="undefined_thing"):  # (and again: not retried, same message)
        run(bad, [x], [(1,)], [lucid.float32], 1)
    assert (x + 1).sum().item() == 8.0
