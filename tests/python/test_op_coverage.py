"""Coverage: every public op of lucid is exercised by the op tests.

Each area keeps its own registry (test_elementwise*.py, test_reduce*.py,
test_linalg.py, test_shape_ops.py, test_advanced_indexing.py, test_views.py, ...),
each checking forward against torch, backward against torch and gradcheck. This
test fails when a function appears in `lucid` without any of those files naming it,
so a new op cannot land untested. Functions that are not ops (creation, random,
dtype and configuration helpers) are listed here and tested in their own files.
"""

import inspect
import os
import re
import types

import lucid

NOT_OPS = {
    # creation and conversion (test_creation.py, test_interop.py)
    "arange", "as_tensor", "asarray", "empty", "empty_like", "eye", "from_dlpack", "from_numpy", "frombuffer",
    "full", "full_like", "linspace", "logspace", "ones", "ones_like", "tensor", "zeros", "zeros_like",
    # random (test_random.py)
    "bernoulli", "get_rng_state", "initial_seed", "manual_seed", "normal", "rand", "rand_like", "randint",
    "randint_like", "randn", "randn_like", "randperm", "seed", "set_rng_state",
    # dtypes, modes and settings (test_dtype_inference.py, test_autograd.py, test_repr.py)
    "get_default_dtype", "set_default_dtype", "promote_types", "is_grad_enabled", "is_inference_mode_enabled",
    "set_printoptions", "get_num_threads", "set_num_threads", "is_tensor", "numel",
    # checkpoints (test_serialization.py, test_resume.py)
    "save", "load", "save_safetensors", "load_safetensors",
}

HERE = os.path.dirname(__file__)
OP_TEST_FILES = [f for f in os.listdir(HERE) if f.startswith("test_") and f.endswith(".py")
                 and f != os.path.basename(__file__)]


def public_functions():
    return sorted(n for n in dir(lucid) if not n.startswith("_")
                  and callable(getattr(lucid, n)) and not inspect.isclass(getattr(lucid, n))
                  and not isinstance(getattr(lucid, n), types.ModuleType))


def test_every_public_op_is_tested():
    source = "\n".join(open(os.path.join(HERE, f)).read() for f in OP_TEST_FILES)
    missing = [n for n in public_functions() if n not in NOT_OPS
               and not re.search(rf"(lucid\.{n}\b|\.{n}\(|[\"']{n}[\"'])", source)]
    assert not missing, f"public ops with no test naming them: {missing}"


def test_not_ops_list_has_no_stale_names():
    assert NOT_OPS <= set(public_functions()), NOT_OPS - set(public_functions())
