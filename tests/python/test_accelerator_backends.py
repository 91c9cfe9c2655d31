"""lucid.accelerator and lucid.backends against torch.accelerator and torch.backends: the
answers for lucid's build and machine, torch's defaults for every switch, torch's checks and
errors when one is set wrongly, and the deterministic / float32-precision switches at the top
level. Without a GPU (CI), torch and lucid both answer False / 0 and refuse the calls that need
a device; the GPU half runs where lucid has one."""

import os
import platform
import subprocess
import sys

import pytest
import torch

import lucid
from lucid import _C

no_accelerator = pytest.mark.skipif(lucid.gpu.is_available() or torch.cuda.is_available(),
                                    reason="compares with torch's answers without a GPU")
needs_gpu = pytest.mark.skipif(not lucid.gpu.is_available(), reason="lucid has no GPU here")


# ---- lucid.accelerator -----------------------------------------------------------------------

def test_accelerator_queries_answer_for_lucids_build():
    acc = lucid.accelerator
    assert acc.is_available() == lucid.gpu.is_available()
    assert acc.device_count() == lucid.gpu.device_count()
    expected = lucid.device("gpu") if _C._built_with_cuda else None
    assert acc.current_accelerator() == expected
    assert acc.current_accelerator(check_available=True) == (expected if acc.is_available() else None)
    if expected is not None:
        assert acc.current_accelerator().index is None  # as torch's: the index is current_device_index()
        assert acc.current_accelerator() == lucid.device("cuda")


def test_the_usual_program_runs_on_what_the_accelerator_query_picks():
    use_accel = True and lucid.accelerator.is_available()
    device = lucid.accelerator.current_accelerator() if use_accel else lucid.device("cpu")
    model = lucid.nn.Linear(2, 1).to(device)
    assert model.weight.device == device


@no_accelerator
def test_without_a_gpu_the_answers_are_torchs():
    assert lucid.accelerator.is_available() is torch.accelerator.is_available() is False
    assert lucid.accelerator.device_count() == torch.accelerator.device_count() == 0
    assert lucid.accelerator.memory_allocated() == torch.accelerator.memory_allocated() == 0
    assert lucid.accelerator.max_memory_allocated() == torch.accelerator.max_memory_allocated() == 0
    assert lucid.accelerator.memory_reserved() == torch.accelerator.memory_reserved() == 0
    lucid.accelerator.empty_cache()
    torch.accelerator.empty_cache()
    lucid.accelerator.reset_peak_memory_stats()
    with lucid.accelerator.device_index(None), torch.accelerator.device_index(None):
        pass


@no_accelerator
@pytest.mark.parametrize("call", ["current_device_index()", "set_device_index(0)", "synchronize()",
                                  "device_index(0).__enter__()"])
def test_without_a_gpu_the_calls_that_need_one_raise_as_torchs(call):
    with pytest.raises(RuntimeError):
        eval("torch.accelerator." + call)
    with pytest.raises(RuntimeError, match="Accelerator expected|No GPU was found"):
        eval("lucid.accelerator." + call)


@no_accelerator
@pytest.mark.parametrize("name, arg", [("current_device_idx", ()), ("set_device_idx", (0,))])
def test_the_deprecated_aliases_warn_then_act_as_torchs(name, arg):
    for module in (torch.accelerator, lucid.accelerator):
        with pytest.warns(FutureWarning, match="instead"), pytest.raises(RuntimeError):
            getattr(module, name)(*arg)


def test_device_arguments_are_checked():
    acc = lucid.accelerator
    with pytest.raises(TypeError, match="a device must be"):
        acc.synchronize(1.5)
    if acc.current_accelerator() is None:
        with pytest.raises(RuntimeError, match="Accelerator expected"):
            acc.set_device_index("gpu:0")
    else:
        with pytest.raises(ValueError, match="cpu doesn't match the current accelerator"):
            acc.set_device_index("cpu")
        with pytest.raises(ValueError, match="with a specified index or an integer"):
            acc.set_device_index("gpu")


@needs_gpu
def test_with_a_gpu_the_current_device_is_gpu_0():
    acc = lucid.accelerator
    assert acc.current_device_index() == 0
    acc.set_device_index(0)
    acc.set_device_index("cuda:0")
    acc.set_device_index(-1)  # torch's no-op
    acc.synchronize()
    acc.synchronize(lucid.device("gpu", 0))
    with acc.device_index(0):
        assert acc.current_device_index() == 0
    with pytest.raises(RuntimeError, match="invalid device index"):
        acc.set_device_index(acc.device_count())
    x = lucid.ones(1000, device="gpu")
    assert acc.memory_allocated() >= 4000 and acc.max_memory_allocated() >= acc.memory_allocated()
    del x
    acc.empty_cache()
    if acc.device_count() > 1:
        with pytest.raises(NotImplementedError, match="no current-device switch"):
            acc.set_device_index(1)


# ---- lucid.backends: queries -----------------------------------------------------------------

def test_backend_queries_answer_truthfully_for_lucid():
    b = lucid.backends
    assert b.cuda.is_built() is _C._built_with_cuda
    v = b.cudnn.version()  # GPU convolutions load cuDNN 9 (where it is installed)
    assert v is None if not _C._built_with_cuda else (v is None or v >= 90000)
    assert b.cudnn.is_available() is (lucid.gpu.is_available() and v is not None)
    assert b.cudnn.is_acceptable(lucid.zeros(1, device="cpu")) is False  # a CPU tensor
    if b.cudnn.is_available():
        assert b.cudnn.is_acceptable(lucid.zeros(1, device="gpu")) is True
        assert b.cudnn.is_acceptable(lucid.zeros(1, dtype=lucid.int64, device="gpu")) is False
    assert b.mkldnn.is_available() is False  # no oneDNN: lucid's own CPU kernels
    assert b.openmp.is_available() is False  # lucid's own thread pool (csrc/core/parallel.cpp)
    assert b.mkl.is_available() is False  # OpenBLAS, not MKL
    assert b.mps.is_available() is torch.backends.mps.is_available() is False
    assert b.mps.is_built() is False
    assert set(b.__all__) <= {m for m in dir(torch.backends) if not m.startswith("_")}


def test_cpu_capability_names_the_kernels_instruction_set_as_torch():
    cap = lucid.backends.cpu.get_cpu_capability()
    assert cap in ("DEFAULT", "AVX2", "AVX512")
    # the same probe as torch's on x86 (torch names Arm's SVE widths, lucid has no SVE kernels)
    if platform.machine() == "x86_64" and not {"LUCID_CPU_ISA", "ATEN_CPU_CAPABILITY"} & set(os.environ):
        assert cap == torch.backends.cpu.get_cpu_capability()
    env = dict(os.environ, LUCID_CPU_ISA="baseline")
    capped = subprocess.run([sys.executable, "-c", "import lucid; print(lucid.backends.cpu.get_cpu_capability())"],
                            env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert capped == "DEFAULT"


# ---- lucid.backends: switches ----------------------------------------------------------------

SWITCHES = [  # (module path under backends, attribute)
    ("cudnn", "enabled"), ("cudnn", "benchmark"), ("cudnn", "deterministic"), ("cudnn", "allow_tf32"),
    ("cuda.matmul", "allow_tf32"), ("cuda.matmul", "allow_fp16_reduced_precision_reduction"),
    ("cuda.matmul", "allow_bf16_reduced_precision_reduction"), ("cuda.matmul", "allow_fp16_accumulation"),
    ("mkldnn", "enabled"), ("mkldnn", "deterministic"),
]


def owner(root, path):
    for part in path.split("."):
        root = getattr(root, part)
    return root


@pytest.fixture
def restored_switches():
    saved = [(owner(root, p), a, getattr(owner(root, p), a)) for root in (lucid.backends, torch.backends)
             for p, a in SWITCHES]
    precision = lucid.get_float32_matmul_precision(), torch.get_float32_matmul_precision()
    yield
    for obj, attr, value in saved:
        setattr(obj, attr, value)
    lucid.set_float32_matmul_precision(precision[0])
    torch.set_float32_matmul_precision(precision[1])


@pytest.mark.parametrize("path, attr", SWITCHES)
def test_switches_default_as_torchs_and_keep_what_is_set(path, attr, restored_switches):
    ours, theirs = owner(lucid.backends, path), owner(torch.backends, path)
    if (path, attr) == ("cudnn", "allow_tf32"):  # exact by default (test_cudnn_allow_tf32_defaults_to_exact)
        assert getattr(ours, attr) is False and getattr(theirs, attr) is True
    else:
        assert getattr(ours, attr) is getattr(theirs, attr)
    for value in (not getattr(theirs, attr), getattr(theirs, attr)):
        setattr(ours, attr, value)
        setattr(theirs, attr, value)
        assert getattr(ours, attr) is getattr(theirs, attr) is value


@pytest.mark.parametrize("path, attr", SWITCHES)
def test_a_switch_set_to_a_non_bool_raises_as_torchs(path, attr, restored_switches):
    ours, theirs = owner(lucid.backends, path), owner(torch.backends, path)
    before = getattr(ours, attr)
    with pytest.raises(Exception) as expected:
        setattr(theirs, attr, "yes")
    with pytest.raises(type(expected.value), match="expects a bool"):
        setattr(ours, attr, "yes")
    assert getattr(ours, attr) is before


@pytest.mark.parametrize("value", [(), (True, True, True), (1,), (True, 1), "x"])
def test_reduced_precision_reductions_parse_as_torchs(value, restored_switches):
    name = "allow_fp16_reduced_precision_reduction"
    with pytest.raises(TypeError) as theirs:
        setattr(torch.backends.cuda.matmul, name, value)
    with pytest.raises(TypeError) as ours:
        setattr(lucid.backends.cuda.matmul, name, value)
    assert str(ours.value) == str(theirs.value)


def test_reduced_precision_split_k_follows_the_tuple_form(restored_switches):
    for m in (lucid.backends.cuda.matmul, torch.backends.cuda.matmul):
        m.allow_bf16_reduced_precision_reduction = (False, False)
    for m in (lucid.backends.cuda.matmul, torch.backends.cuda.matmul):
        assert m.allow_bf16_reduced_precision_reduction is False
        assert m.allow_bf16_reduced_precision_reduction_split_k is False
        with pytest.raises(AttributeError, match="Unknown attribute allow_bf16_reduced_precision_reduction_split_k"):
            m.allow_bf16_reduced_precision_reduction_split_k = True
        with pytest.raises(AttributeError, match="Unknown attribute nonsense"):
            m.nonsense
        with pytest.raises(AttributeError, match="Unknown attribute nonsense"):
            m.nonsense = True


def test_cudnn_allow_tf32_defaults_to_exact(restored_switches):
    # lucid's one default unlike torch's: float32 convolutions exact unless asked
    assert lucid.backends.cudnn.allow_tf32 is False
    lucid.backends.cudnn.allow_tf32 = True
    assert lucid.backends.cudnn.allow_tf32 is True
    with pytest.raises(RuntimeError, match="set_allow_tf32_cudnn expects a bool"):
        lucid.backends.cudnn.allow_tf32 = 1


def test_cudnn_flags_context_sets_and_restores_as_torchs(restored_switches):
    lucid.backends.cudnn.benchmark = torch.backends.cudnn.benchmark = True
    with lucid.backends.cudnn.flags(), torch.backends.cudnn.flags():
        for name in ("enabled", "benchmark", "deterministic", "allow_tf32"):
            assert getattr(lucid.backends.cudnn, name) is getattr(torch.backends.cudnn, name)
    with lucid.backends.cudnn.flags(enabled=True, benchmark=True, deterministic=True, allow_tf32=False):
        assert lucid.backends.cudnn.deterministic is True and lucid.backends.cudnn.allow_tf32 is False
    assert lucid.backends.cudnn.benchmark is True and lucid.backends.cudnn.enabled is True
    assert lucid.backends.cudnn.deterministic is False


def test_attention_kernel_switches_as_torchs():
    b = lucid.backends.cuda
    for kind in ("flash", "mem_efficient", "math", "cudnn"):
        assert getattr(b, f"{kind}_sdp_enabled")() is getattr(torch.backends.cuda, f"{kind}_sdp_enabled")()
        getattr(b, f"enable_{kind}_sdp")(False)
        assert getattr(b, f"{kind}_sdp_enabled")() is False
        with pytest.raises(RuntimeError, match="expects a bool"):
            getattr(b, f"enable_{kind}_sdp")(1)
        getattr(b, f"enable_{kind}_sdp")(True)


# ---- top-level switches ----------------------------------------------------------------------

def test_float32_matmul_precision_is_matmul_allow_tf32_as_in_torch(restored_switches):
    for precision in ("high", "medium", "highest"):
        lucid.set_float32_matmul_precision(precision)
        torch.set_float32_matmul_precision(precision)
        assert lucid.get_float32_matmul_precision() == torch.get_float32_matmul_precision() == precision
        assert lucid.backends.cuda.matmul.allow_tf32 is torch.backends.cuda.matmul.allow_tf32
    lucid.backends.cuda.matmul.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = True
    assert lucid.get_float32_matmul_precision() == torch.get_float32_matmul_precision() == "high"
    with pytest.warns(UserWarning, match="not one of 'highest', 'high', or 'medium'"):
        lucid.set_float32_matmul_precision("fastest")
    assert lucid.get_float32_matmul_precision() == "high"
    with pytest.raises(RuntimeError, match="expects a str, but got int"):
        torch.set_float32_matmul_precision(1)
    with pytest.raises(RuntimeError, match="expects a str, but got int"):
        lucid.set_float32_matmul_precision(1)


@pytest.fixture
def restored_determinism():
    saved = lucid.get_deterministic_debug_mode(), torch.get_deterministic_debug_mode()
    yield
    lucid.set_deterministic_debug_mode(saved[0])
    torch.set_deterministic_debug_mode(saved[1])


def deterministic_state(m):
    return (m.are_deterministic_algorithms_enabled(), m.is_deterministic_algorithms_warn_only_enabled(),
            m.get_deterministic_debug_mode())


def test_deterministic_algorithms_switch_as_torchs(restored_determinism):
    assert deterministic_state(lucid) == deterministic_state(torch) == (False, False, 0)
    for kwargs in ({"mode": True}, {"mode": True, "warn_only": True}, {"mode": False}):
        lucid.use_deterministic_algorithms(**kwargs)
        torch.use_deterministic_algorithms(**kwargs)
        assert deterministic_state(lucid) == deterministic_state(torch)
    for mode in ("warn", "error", "default", 1, 2, 0):
        lucid.set_deterministic_debug_mode(mode)
        torch.set_deterministic_debug_mode(mode)
        assert deterministic_state(lucid) == deterministic_state(torch)


def test_convolutions_are_deterministic_when_either_switch_says_so(restored_determinism):
    """GPU convolutions take only cuDNN's deterministic algorithms under cudnn.deterministic or
    use_deterministic_algorithms (the engine's switch, read when a convolution is called)."""
    assert lucid._C._conv_deterministic() is False
    with lucid.backends.cudnn.flags(enabled=True, deterministic=True):
        assert lucid._C._conv_deterministic() is True
    assert lucid._C._conv_deterministic() is False
    lucid.use_deterministic_algorithms(True, warn_only=True)
    assert lucid._C._conv_deterministic() is True
    lucid.backends.cudnn.deterministic = True
    lucid.use_deterministic_algorithms(False)
    assert lucid._C._conv_deterministic() is True  # (cudnn.deterministic still asks)
    lucid.backends.cudnn.deterministic = False
    assert lucid._C._conv_deterministic() is False
    lucid.set_deterministic_debug_mode("error")
    assert lucid._C._conv_deterministic() is True


@pytest.mark.parametrize("call", ["use_deterministic_algorithms(1)", "use_deterministic_algorithms(True, warn_only=1)",
                                  "set_deterministic_debug_mode('bad')", "set_deterministic_debug_mode(5)",
                                  "set_deterministic_debug_mode(1.0)"])
def test_deterministic_switch_errors_as_torchs(call, restored_determinism):
    with pytest.raises(Exception) as theirs:
        eval("torch." + call)
    with pytest.raises(type(theirs.value)) as ours:
        eval("lucid." + call)
    if "debug_mode" in call:
        assert str(ours.value) == str(theirs.value)
    assert lucid.get_deterministic_debug_mode() == 0


def test_with_determinism_on_lucid_still_runs_everything(restored_determinism):
    lucid.use_deterministic_algorithms(True)
    x = lucid.zeros(4).index_add_(0, lucid.tensor([0, 0, 3]), lucid.ones(3))
    assert x.tolist() == [2.0, 0.0, 0.0, 1.0]
