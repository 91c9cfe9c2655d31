"""The layout of lucid.nn.modules is torch.nn.modules': every class torch exports from
torch.nn.modules.<file> and lucid has is lucid.nn.modules.<file>.<Name>, the same object as
lucid.nn.<Name>, defined in that file (so a pickle or an import that names a layer by its
torch path finds it). What lucid lacks is listed below, as data: the test fails when a class
moves away from its file, and when lucid gains one of the listed names (drop it here)."""

import importlib
import pickle
import pkgutil
import warnings
from collections import OrderedDict

import pytest
import torch

import lucid
from conftest import TORCH_VERSION

TORCH_FILES = sorted(i.name for i in pkgutil.iter_modules(torch.nn.modules.__path__) if not i.name.startswith("_"))

# torch.nn.modules files lucid has no counterpart of (each name in them is missing too)
MISSING_FILES = {"linear_cross_entropy", "linear_cross_entropy_options"}

# names in torch.nn.modules.<file>.__all__ that lucid does not have (yet)
MISSING = {
    "linear_cross_entropy_options": {"LinearCrossEntropyOptions"},
    "loss": {"LinearCrossEntropyLoss"},
    "module": {"register_module_backward_hook"},  # (torch's deprecated non-full form)
}


def torch_names(file):
    return list(importlib.import_module(f"torch.nn.modules.{file}").__all__)


@pytest.mark.parametrize("file", TORCH_FILES)
def test_each_torch_file_has_its_lucid_counterpart(file):
    if file in MISSING_FILES:
        with pytest.raises(ImportError):
            importlib.import_module(f"lucid.nn.modules.{file}")
        assert set(torch_names(file)) <= MISSING.get(file, set())
    else:
        assert importlib.import_module(f"lucid.nn.modules.{file}").__name__ == f"lucid.nn.modules.{file}"


@pytest.mark.parametrize("file", sorted(set(TORCH_FILES) - MISSING_FILES))
def test_every_name_torch_exports_from_a_file_lucid_exports_from_the_same_file(file):
    module = importlib.import_module(f"lucid.nn.modules.{file}")
    for name in torch_names(file):
        if name in MISSING.get(file, ()):
            assert not hasattr(module, name) and not hasattr(lucid.nn, name), \
                f"lucid has {name} now: remove it from MISSING[{file!r}]"
            continue
        obj = getattr(module, name)
        if hasattr(torch.nn, name):
            assert obj is getattr(lucid.nn, name), f"lucid.nn.modules.{file}.{name} is not lucid.nn.{name}"
        if isinstance(obj, type):
            assert obj.__module__ == f"lucid.nn.modules.{file}", f"{name} is defined in {obj.__module__}"


@pytest.mark.skipif(TORCH_VERSION < (2, 15),
                    reason="MISSING names torch 2.15's modules (LinearCrossEntropyLoss and its file came in 2.15)")
def test_missing_lists_name_only_torch_names():
    for file, names in MISSING.items():
        assert file in TORCH_FILES and names <= set(torch_names(file)), (file, names - set(torch_names(file)))


def test_every_lucid_layer_lives_in_torchs_file():
    checked = 0
    for name in dir(lucid.nn):
        obj = getattr(lucid.nn, name)
        if isinstance(obj, type) and issubclass(obj, lucid.nn.Module) and isinstance(getattr(torch.nn, name, None),
                                                                                      type):
            assert obj.__module__.replace("lucid.", "torch.", 1) == getattr(torch.nn, name).__module__, name
            checked += 1
    assert checked >= 140  # all of lucid.nn's layers (142 when written)


def test_modules_star_import_brings_classes_not_files():
    assert lucid.nn.utils.__name__ == "lucid.nn.utils"  # not lucid.nn.modules.utils
    assert set(lucid.nn.modules.__all__) >= {"Linear", "Module", "Sequential", "LSTM", "MultiheadAttention"}
    assert not {"linear", "utils", "module"} & set(lucid.nn.modules.__all__)


def test_multihead_attention_out_proj_is_a_non_dynamically_quantizable_linear():
    cls = lucid.nn.modules.linear.NonDynamicallyQuantizableLinear
    assert issubclass(cls, lucid.nn.Linear)
    assert type(lucid.nn.MultiheadAttention(8, 2).out_proj) is cls
    assert type(torch.nn.MultiheadAttention(8, 2).out_proj) is torch.nn.modules.linear.NonDynamicallyQuantizableLinear
    assert lucid.nn.modules.activation.MultiheadAttention is lucid.nn.MultiheadAttention


def test_a_pickled_layer_names_its_torch_path():
    data = pickle.dumps(lucid.nn.Linear(2, 3))
    assert b"lucid.nn.modules.linear" in data and b"Linear" in data
    assert type(pickle.loads(data)) is lucid.nn.Linear


def test_container_is_deprecated_as_in_torch():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ours = lucid.nn.Container(act=lucid.nn.ReLU())
        theirs = torch.nn.Container(act=torch.nn.ReLU())
    assert [w.category for w in caught] == [FutureWarning, FutureWarning]
    # (torch before 2.15 spelled it "All of it's functionality")
    assert str(caught[0].message) == str(caught[1].message).replace("it's", "its")
    assert repr(ours) == repr(theirs) and isinstance(ours.act, lucid.nn.ReLU)


# ---- torch.nn.modules.utils ----------------------------------------------------------------

@pytest.mark.parametrize("name", ["_single", "_pair", "_triple", "_quadruple"])
@pytest.mark.parametrize("value", [3, (1, 2), [4, 5, 6], "ab"])
def test_ntuple_helpers_match_torch(name, value):
    assert getattr(lucid.nn.modules.utils, name)(value) == getattr(torch.nn.modules.utils, name)(value)


def test_reverse_repeat_tuple_and_list_with_default_match_torch():
    ours, theirs = lucid.nn.modules.utils, torch.nn.modules.utils
    assert ours._reverse_repeat_tuple((1, 2, 3), 2) == theirs._reverse_repeat_tuple((1, 2, 3), 2)
    assert ours._list_with_default([None, 4], [1, 2, 7, 9]) == theirs._list_with_default([None, 4], [1, 2, 7, 9])
    assert ours._list_with_default(5, [1, 2]) == theirs._list_with_default(5, [1, 2])
    with pytest.raises(ValueError, match="Input dimension should be at least 3"):
        ours._list_with_default([1, 2], [8, 9])
    with pytest.raises(ValueError, match="Input dimension should be at least 3"):
        theirs._list_with_default([1, 2], [8, 9])


def test_consume_prefix_in_state_dict_matches_torch():
    def fresh(tensor):
        sd = OrderedDict([("module.a.weight", tensor([1.0])), ("other", tensor([2.0])), ("module.b", tensor([3.0]))])
        sd._metadata = OrderedDict([("", {"v": 1}), ("module", {"v": 2}), ("module.a", {"v": 3})])
        return sd

    ours, theirs = fresh(lucid.tensor), fresh(torch.tensor)
    lucid.nn.modules.utils.consume_prefix_in_state_dict_if_present(ours, "module.")
    torch.nn.modules.utils.consume_prefix_in_state_dict_if_present(theirs, "module.")
    assert list(ours) == list(theirs) == ["other", "a.weight", "b"]
    assert ours._metadata == theirs._metadata
    assert [v.tolist() for v in ours.values()] == [v.tolist() for v in theirs.values()]
    with pytest.raises(TypeError, match="prefix must be a str"):
        lucid.nn.modules.utils.consume_prefix_in_state_dict_if_present({}, 1)


def test_a_model_saved_through_dataparallel_loads_into_the_bare_model():
    wrapped = torch.nn.DataParallel(torch.nn.Linear(3, 2))
    sd = OrderedDict((k, lucid.tensor(v.tolist())) for k, v in wrapped.state_dict().items())
    lucid.nn.modules.utils.consume_prefix_in_state_dict_if_present(sd, "module.")
    model = lucid.nn.Linear(3, 2)
    model.load_state_dict(sd)
    assert model.weight.tolist() == wrapped.module.weight.tolist()
