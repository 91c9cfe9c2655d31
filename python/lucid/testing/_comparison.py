"""assert_close (torch.testing.assert_close) for lucid tensors, numbers and containers of
them, following torch/testing/_comparison.py: the inputs are paired up (recursing into
sequences, mappings and dataclasses), each pair checks its attributes and then its
values, and the first failure raises with torch's message ("Tensor-likes are not
close!", the mismatched element count, the greatest absolute and relative differences
and their indices). NumPy's scalars and arrays are taken when NumPy is loaded; this
module never imports it."""

import cmath
import collections.abc
import contextlib
import sys

from .. import _dtype as D
from .._tensor import Tensor

# {dtype: (rtol, atol)}: torch's defaults; other dtypes (integers, bool) compare exactly
_DTYPE_PRECISIONS = {
    D.float16: (0.001, 1e-5),
    D.bfloat16: (0.016, 1e-5),
    D.float32: (1.3e-6, 1e-5),
    D.float64: (1e-7, 1e-7),
    D.complex64: (1.3e-6, 1e-5),
    D.complex128: (1e-7, 1e-7),
}


def _numpy():
    """NumPy if the program has loaded it (then its scalars and arrays can be here)."""
    return sys.modules.get("numpy")


def _sparse_class():
    from .._sparse import SparseTensor
    return SparseTensor


class ErrorMeta(Exception):
    """A failure found while comparing, raised to the caller as `type(msg)`."""

    def __init__(self, type, msg, *, id=()):
        super().__init__("internal error of lucid.testing: raise ErrorMeta.to_error() for user-facing errors")
        self.type = type
        self.msg = msg
        self.id = id

    def to_error(self, msg=None):
        if not isinstance(msg, str):
            generated = self.msg
            if self.id:
                generated += f"\n\nThe failure occurred for item {''.join(str([item]) for item in self.id)}"
            msg = msg(generated) if callable(msg) else generated
        return self.type(msg)


def default_tolerances(*inputs, dtype_precisions=None):
    """The loosest (rtol, atol) of the inputs' dtypes (tensors or dtypes)."""
    dtypes = []
    for input in inputs:
        if isinstance(input, (Tensor, _sparse_class())):
            dtypes.append(input.dtype)
        elif isinstance(input, D.dtype):
            dtypes.append(input)
        else:
            raise TypeError(f"Expected a lucid.Tensor or a lucid.dtype, but got {type(input)} instead.")
    precisions = dtype_precisions or _DTYPE_PRECISIONS
    rtols, atols = zip(*[precisions.get(dt, (0.0, 0.0)) for dt in dtypes])
    return max(rtols), max(atols)


def get_tolerances(*inputs, rtol, atol, id=()):
    if (rtol is None) ^ (atol is None):
        # both or neither: atol=0.0 alone would still let rtol pass values
        raise ErrorMeta(ValueError, f"Both 'rtol' and 'atol' must be either specified or omitted, "
                                    f"but got no {'rtol' if rtol is None else 'atol'}.", id=id)
    if rtol is not None:
        return rtol, atol
    return default_tolerances(*inputs)


def _make_mismatch_msg(*, default_identifier, identifier=None, extra=None, abs_diff, abs_diff_idx=None, atol,
                       rel_diff, rel_diff_idx=None, rtol):
    equality = rtol == 0 and atol == 0

    def diff_msg(*, type, diff, idx, tol):
        msg = f"{type.title()} difference: {diff}" if idx is None else f"Greatest {type} difference: {diff} at index {idx}"
        if not equality:
            msg += f" (up to {tol} allowed)"
        return msg + "\n"

    if identifier is None:
        identifier = default_identifier
    elif callable(identifier):
        identifier = identifier(default_identifier)
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += diff_msg(type="absolute", diff=abs_diff, idx=abs_diff_idx, tol=atol)
    msg += diff_msg(type="relative", diff=rel_diff, idx=rel_diff_idx, tol=rtol)
    return msg.strip()


def make_scalar_mismatch_msg(actual, expected, *, rtol, atol, identifier=None):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _make_mismatch_msg(default_identifier="Scalars", identifier=identifier,
                              extra=f"Expected {expected} but got {actual}.", abs_diff=abs_diff, atol=atol,
                              rel_diff=rel_diff, rtol=rtol)


def make_tensor_mismatch_msg(actual, expected, matches, *, rtol, atol, identifier=None):
    """torch's message for tensors: mismatch count, greatest absolute and relative
    differences among the mismatched elements, with their (unravelled) indices."""
    def unravel(flat):
        if not matches.shape:
            return ()
        index = []
        for size in reversed(matches.shape):
            flat, mod = divmod(flat, size)
            index.append(mod)
        return tuple(reversed(index))

    n = matches.numel()
    mismatches = n - int(matches.sum().item())
    extra = f"Mismatched elements: {mismatches} / {n} ({mismatches / n:.1%})"
    a, e, m = actual.flatten(), expected.flatten(), matches.flatten()
    if not (a.dtype.is_floating_point or a.dtype.is_complex):
        a, e = a.to(D.int64), e.to(D.int64)  # (no overflow in the difference)
    abs_diff = (a - e).abs()
    abs_diff[m] = 0
    max_abs, max_abs_idx = abs_diff.max(0)
    rel_diff = abs_diff / e.abs()
    rel_diff[m] = 0
    max_rel, max_rel_idx = rel_diff.max(0)
    return _make_mismatch_msg(default_identifier="Tensor-likes", identifier=identifier, extra=extra,
                              abs_diff=max_abs.item(), abs_diff_idx=unravel(int(max_abs_idx.item())), atol=atol,
                              rel_diff=max_rel.item(), rel_diff_idx=unravel(int(max_rel_idx.item())), rtol=rtol)


class UnsupportedInputs(Exception):
    """A pair type cannot handle these inputs: the next one is tried."""


class Pair:
    """Two inputs to compare; compare() raises ErrorMeta on a mismatch."""

    def __init__(self, actual, expected, *, id=(), **unknown_parameters):
        self.actual = actual
        self.expected = expected
        self.id = id
        self._unknown_parameters = unknown_parameters

    @staticmethod
    def _inputs_not_supported():
        raise UnsupportedInputs

    @staticmethod
    def _check_inputs_isinstance(*inputs, cls):
        if not all(isinstance(input, cls) for input in inputs):
            Pair._inputs_not_supported()

    def _fail(self, type, msg, *, id=()):
        raise ErrorMeta(type, msg, id=self.id if not id and hasattr(self, "id") else id)

    def compare(self):
        raise NotImplementedError

    def extra_repr(self):
        return []

    def __repr__(self):
        body = [f"    {name}={value!s}," for name, value in
                [("id", self.id), ("actual", self.actual), ("expected", self.expected),
                 *[(extra, getattr(self, extra)) for extra in self.extra_repr()]]]
        return "\n".join((f"{type(self).__name__}(", *body, ")"))


class ObjectPair(Pair):
    """Any inputs, compared with ==."""

    def compare(self):
        try:
            equal = self.actual == self.expected
        except Exception as error:
            raise ErrorMeta(ValueError, f"{self.actual} == {self.expected} failed with:\n{error}.",
                            id=self.id) from error
        if not equal:
            self._fail(AssertionError, f"{self.actual} != {self.expected}")


class NonePair(Pair):
    def __init__(self, actual, expected, **other_parameters):
        if not (actual is None or expected is None):
            self._inputs_not_supported()
        super().__init__(actual, expected, **other_parameters)

    def compare(self):
        if not (self.actual is None and self.expected is None):
            self._fail(AssertionError, f"None mismatch: {self.actual} is not {self.expected}")


class BooleanPair(Pair):
    """bool (and NumPy's bool_) inputs."""

    def __init__(self, actual, expected, *, id, **other_parameters):
        np = _numpy()
        types = (bool, np.bool_) if np is not None else (bool,)
        self._check_inputs_isinstance(actual, expected, cls=types)
        actual, expected = (v if isinstance(v, bool) else v.item() for v in (actual, expected))
        super().__init__(actual, expected, **other_parameters)

    def compare(self):
        if self.actual is not self.expected:
            self._fail(AssertionError, f"Booleans mismatch: {self.actual} is not {self.expected}")


class NumberPair(Pair):
    """int, float and complex (and NumPy's number) inputs: int as int64, float as float64,
    complex as complex128 for the default tolerances."""

    _TYPE_TO_DTYPE = {int: D.int64, float: D.float64, complex: D.complex128}
    _NUMBER_TYPES = tuple(_TYPE_TO_DTYPE)

    def __init__(self, actual, expected, *, id=(), rtol=None, atol=None, equal_nan=False, check_dtype=False,
                 **other_parameters):
        np = _numpy()
        types = self._NUMBER_TYPES + ((np.number,) if np is not None else ())
        self._check_inputs_isinstance(actual, expected, cls=types)
        actual, expected = (v.item() if np is not None and isinstance(v, np.number) else v for v in (actual, expected))
        super().__init__(actual, expected, id=id, **other_parameters)
        self.rtol, self.atol = get_tolerances(*[self._TYPE_TO_DTYPE[type(v)] for v in (actual, expected)],
                                              rtol=rtol, atol=atol, id=id)
        self.equal_nan = equal_nan
        self.check_dtype = check_dtype

    def compare(self):
        if self.check_dtype and type(self.actual) is not type(self.expected):
            self._fail(AssertionError,
                       f"The (d)types do not match: {type(self.actual)} != {type(self.expected)}.")
        if self.actual == self.expected:
            return
        if self.equal_nan and cmath.isnan(self.actual) and cmath.isnan(self.expected):
            return
        abs_diff = abs(self.actual - self.expected)
        tolerance = self.atol + self.rtol * abs(self.expected)
        if cmath.isfinite(abs_diff) and abs_diff <= tolerance:
            return
        self._fail(AssertionError, make_scalar_mismatch_msg(self.actual, self.expected, rtol=self.rtol,
                                                            atol=self.atol))

    def extra_repr(self):
        return ("rtol", "atol", "equal_nan", "check_dtype")


class TensorLikePair(Pair):
    """lucid tensors (dense and sparse), and inputs of one type that lucid.as_tensor takes
    (NumPy arrays)."""

    def __init__(self, actual, expected, *, id=(), allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, **other_parameters):
        actual, expected = self._process_inputs(actual, expected, id=id, allow_subclasses=allow_subclasses)
        super().__init__(actual, expected, id=id, **other_parameters)
        self.rtol, self.atol = get_tolerances(actual, expected, rtol=rtol, atol=atol, id=self.id)
        self.equal_nan = equal_nan
        self.check_device = check_device
        self.check_dtype = check_dtype
        self.check_layout = check_layout
        self.check_stride = check_stride

    def _process_inputs(self, actual, expected, *, id, allow_subclasses):
        tensor_like = (Tensor, _sparse_class())
        both_tensors = isinstance(actual, tensor_like) and isinstance(expected, tensor_like)
        related = both_tensors or isinstance(actual, type(expected)) or isinstance(expected, type(actual))
        if not related:
            self._inputs_not_supported()
        if not allow_subclasses and type(actual) is not type(expected):
            self._inputs_not_supported()
        return tuple(self._to_tensor(v) for v in (actual, expected))

    def _to_tensor(self, tensor_like):
        if isinstance(tensor_like, (Tensor, _sparse_class())):
            return tensor_like
        from .._creation import as_tensor
        try:
            return as_tensor(tensor_like)
        except Exception:
            self._inputs_not_supported()

    def compare(self):
        actual, expected = self.actual, self.expected
        self._compare_attributes(actual, expected)
        actual, expected = self._equalize_attributes(actual, expected)
        self._compare_values(actual, expected)

    def _compare_attributes(self, actual, expected):
        def mismatch(name, a, e):
            self._fail(AssertionError, f"The values for attribute '{name}' do not match: {a} != {e}.")

        if actual.shape != expected.shape:
            mismatch("shape", actual.shape, expected.shape)
        if actual.layout != expected.layout:
            if self.check_layout:
                mismatch("layout", actual.layout, expected.layout)
        elif isinstance(actual, Tensor) and self.check_stride and actual.stride() != expected.stride():
            mismatch("stride()", actual.stride(), expected.stride())
        if self.check_device and actual.device != expected.device:
            mismatch("device", actual.device, expected.device)
        if self.check_dtype and actual.dtype != expected.dtype:
            mismatch("dtype", actual.dtype, expected.dtype)

    def _equalize_attributes(self, actual, expected):
        """The pair on one device (the CPU), of one dtype (promoted) and one layout (dense)."""
        if actual.device != expected.device:
            actual, expected = actual.cpu(), expected.cpu()
        if actual.dtype != expected.dtype:
            dtype = D.promote_types(actual.dtype, expected.dtype)
            actual, expected = actual.to(dtype), expected.to(dtype)
        if actual.layout != expected.layout:
            actual, expected = (t if isinstance(t, Tensor) else t.to_dense() for t in (actual, expected))
        return actual, expected

    def _compare_values(self, actual, expected):
        from .. import sparse_coo, sparse_csr
        if actual.layout is sparse_coo:
            compare = self._compare_sparse_coo_values
        elif actual.layout is sparse_csr:
            compare = self._compare_sparse_csr_values
        else:
            compare = self._compare_regular_values_close
        compare(actual, expected, rtol=self.rtol, atol=self.atol, equal_nan=self.equal_nan)

    def _compare_sparse_coo_values(self, actual, expected, *, rtol, atol, equal_nan):
        if actual.sparse_dim() != expected.sparse_dim():
            self._fail(AssertionError, f"The number of sparse dimensions in sparse COO tensors does not match: "
                                       f"{actual.sparse_dim()} != {expected.sparse_dim()}")
        if actual._nnz() != expected._nnz():
            self._fail(AssertionError, f"The number of specified values in sparse COO tensors does not match: "
                                       f"{actual._nnz()} != {expected._nnz()}")
        self._compare_regular_values_equal(actual._indices(), expected._indices(),
                                           identifier="Sparse COO indices")
        self._compare_regular_values_close(actual._values(), expected._values(), rtol=rtol, atol=atol,
                                           equal_nan=equal_nan, identifier="Sparse COO values")

    def _compare_sparse_csr_values(self, actual, expected, *, rtol, atol, equal_nan):
        if actual._nnz() != expected._nnz():
            self._fail(AssertionError, f"The number of specified values in sparse CSR tensors does not match: "
                                       f"{actual._nnz()} != {expected._nnz()}")
        self._compare_regular_values_equal(actual.crow_indices(), expected.crow_indices(),
                                           identifier="Sparse CSR crow_indices")
        self._compare_regular_values_equal(actual.col_indices(), expected.col_indices(),
                                           identifier="Sparse CSR col_indices")
        self._compare_regular_values_close(actual.values(), expected.values(), rtol=rtol, atol=atol,
                                           equal_nan=equal_nan, identifier="Sparse CSR values")

    def _compare_regular_values_equal(self, actual, expected, *, equal_nan=False, identifier=None):
        self._compare_regular_values_close(actual, expected, rtol=0, atol=0, equal_nan=equal_nan,
                                           identifier=identifier)

    def _compare_regular_values_close(self, actual, expected, *, rtol, atol, equal_nan, identifier=None):
        from .. import isclose  # (an engine op, in lucid's namespace once lucid is loaded)
        matches = isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
        if bool(matches.all()):
            return
        if actual.shape == ():
            msg = make_scalar_mismatch_msg(actual.item(), expected.item(), rtol=rtol, atol=atol,
                                           identifier=identifier)
        else:
            msg = make_tensor_mismatch_msg(actual, expected, matches, rtol=rtol, atol=atol, identifier=identifier)
        self._fail(AssertionError, msg)

    def extra_repr(self):
        return ("rtol", "atol", "equal_nan", "check_device", "check_dtype", "check_layout", "check_stride")


def originate_pairs(actual, expected, *, pair_types, sequence_types=(collections.abc.Sequence,),
                    mapping_types=(collections.abc.Mapping,), id=(), **options):
    """The pairs to compare: sequences (not str) element by element, mappings key by key,
    dataclasses field by field where == cannot tell, otherwise the first pair type that
    takes the inputs."""
    if (isinstance(actual, sequence_types) and not isinstance(actual, str)
            and isinstance(expected, sequence_types) and not isinstance(expected, str)):
        if len(actual) != len(expected):
            raise ErrorMeta(AssertionError,
                            f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", id=id)
        pairs = []
        for idx in range(len(actual)):
            pairs.extend(originate_pairs(actual[idx], expected[idx], pair_types=pair_types,
                                         sequence_types=sequence_types, mapping_types=mapping_types,
                                         id=(*id, idx), **options))
        return pairs
    if isinstance(actual, mapping_types) and isinstance(expected, mapping_types):
        actual_keys, expected_keys = set(actual.keys()), set(expected.keys())
        if actual_keys != expected_keys:
            raise ErrorMeta(AssertionError,
                            f"The keys of the mappings do not match:\n"
                            f"Missing keys in the actual mapping: {sorted(expected_keys - actual_keys)}\n"
                            f"Additional keys in the actual mapping: {sorted(actual_keys - expected_keys)}", id=id)
        keys = actual_keys
        with contextlib.suppress(Exception):  # (sorted, where the keys sort: the first failure is then stable)
            keys = sorted(keys)
        pairs = []
        for key in keys:
            pairs.extend(originate_pairs(actual[key], expected[key], pair_types=pair_types,
                                         sequence_types=sequence_types, mapping_types=mapping_types,
                                         id=(*id, key), **options))
        return pairs
    import dataclasses  # (here: `import lucid` loads this module and should not load dataclasses)
    if (not isinstance(actual, (type, Tensor)) and not isinstance(expected, (type, Tensor))
            and dataclasses.is_dataclass(actual) and dataclasses.is_dataclass(expected)
            and type(actual) is type(expected)):
        # a dataclass's own == where it gives a bool; field by field where its fields are
        # tensors (a multi-element tensor has no truth value)
        try:
            equal = actual == expected
        except RuntimeError as error:
            if "Boolean value of Tensor" not in str(error):
                raise
        else:
            if type(equal) is bool:
                return [ObjectPair(actual, expected, id=id, **options)]
        pairs = []
        for field in dataclasses.fields(actual):
            if field.compare:
                pairs.extend(originate_pairs(getattr(actual, field.name), getattr(expected, field.name),
                                             pair_types=pair_types, sequence_types=sequence_types,
                                             mapping_types=mapping_types, id=(*id, field.name), **options))
        return pairs
    for pair_type in pair_types:
        try:
            return [pair_type(actual, expected, id=id, **options)]
        except UnsupportedInputs:
            continue
        except ErrorMeta:
            raise
        except Exception as error:
            raise RuntimeError(
                f"Originating a {pair_type.__name__}() at item {''.join(str([item]) for item in id)} with\n\n"
                f"{type(actual).__name__}(): {actual}\n\nand\n\n{type(expected).__name__}(): {expected}\n\n"
                f"resulted in the unexpected exception above.") from error
    raise ErrorMeta(TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} and "
                               f"{type(expected)}.", id=id)


def not_close_error_metas(actual, expected, *, pair_types=(ObjectPair,), sequence_types=(collections.abc.Sequence,),
                          mapping_types=(collections.abc.Mapping,), **options):
    """The ErrorMeta of every pair that does not match."""
    __tracebackhide__ = True
    try:
        pairs = originate_pairs(actual, expected, pair_types=pair_types, sequence_types=sequence_types,
                                mapping_types=mapping_types, **options)
    except ErrorMeta as error_meta:
        raise error_meta.to_error() from None
    error_metas = []
    for pair in pairs:
        try:
            pair.compare()
        except ErrorMeta as error_meta:
            error_metas.append(error_meta)
        except Exception as error:
            raise RuntimeError(f"Comparing\n\n{pair}\n\nresulted in the unexpected exception above.") from error
    return error_metas


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    r"""Asserts that actual and expected are close (torch.testing.assert_close).

    Tensors (or numbers) are close if |actual - expected| <= atol + rtol * |expected|
    elementwise; infinities only when equal, NaNs only with equal_nan=True. Omitted,
    rtol and atol are the loosest defaults of the two dtypes: float16 (1e-3, 1e-5),
    bfloat16 (1.6e-2, 1e-5), float32 and complex64 (1.3e-6, 1e-5), float64 and complex128
    (1e-7, 1e-7), and exact for the others. Tensors must also match in shape, and in
    device, dtype and layout unless check_device / check_dtype / check_layout is False
    (then both go to the CPU, to the promoted dtype, to dense), and in strides if
    check_stride. Sequences, mappings and dataclasses are compared item by item.
    msg replaces the message (a string), or builds it from the generated one (a callable).

    Raises ValueError for rtol without atol or the reverse, TypeError for inputs no
    comparison takes, AssertionError for a mismatch.
    """
    __tracebackhide__ = True
    error_metas = not_close_error_metas(
        actual, expected, pair_types=(NonePair, BooleanPair, NumberPair, TensorLikePair),
        allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device,
        check_dtype=check_dtype, check_layout=check_layout, check_stride=check_stride, msg=msg)
    if error_metas:
        raise error_metas[0].to_error(msg)


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated (as in torch, since 1.12): assert_close with non-tensor inputs made
    tensors, equal_nan=True, any dtypes, and looser default tolerances (float16 (1e-3,
    1e-3), float32 (1e-4, 1e-5), float64 (1e-5, 1e-8))."""
    import warnings
    warnings.warn("`lucid.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future "
                  "release. Please use `lucid.testing.assert_close()` instead.", FutureWarning, stacklevel=2)
    from .._creation import tensor
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = default_tolerances(actual, expected, dtype_precisions={
            D.float16: (1e-3, 1e-3), D.float32: (1e-4, 1e-5), D.float64: (1e-5, 1e-8)})
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True, check_dtype=False,
                 check_stride=False, msg=msg or None)
