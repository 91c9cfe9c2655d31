"""Named result tuples, as torch.return_types: `values, indices = t.max(0)` unpacks,
and `.values` / `.indices` name the parts."""

__all__ = ["max", "min", "aminmax", "sort", "topk", "kthvalue", "median", "nanmedian", "mode", "cummax", "cummin", "histogram",
           "frexp", "histogramdd", "linalg_cholesky_ex", "linalg_eig", "linalg_eigh", "linalg_ldl_factor", "linalg_ldl_factor_ex", "linalg_inv_ex", "linalg_lstsq", "linalg_lu",
           "linalg_lu_factor", "linalg_polar", "linalg_lu_factor_ex", "linalg_qr", "linalg_slogdet", "linalg_solve_ex", "linalg_svd",
           "slogdet", "svd", "qr", "triangular_solve", "lu_unpack", "_lu_with_info"]


def _structseq(name, fields):
    def make_property(i):
        return property(lambda self: tuple.__getitem__(self, i))

    def __new__(cls, sequence):
        items = tuple(sequence)
        if len(items) != len(fields):
            raise TypeError(f"lucid.return_types.{name} takes a {len(fields)}-sequence ({len(items)}-sequence given)")
        return tuple.__new__(cls, items)

    def __repr__(self):
        parts = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"lucid.return_types.{name}(\n{parts})"

    def __reduce__(self):
        return (type(self), (tuple(self),))

    ns = {"__new__": __new__, "__repr__": __repr__, "__reduce__": __reduce__, "__slots__": (),
          "n_fields": len(fields), "n_sequence_fields": len(fields), "_fields": tuple(fields),
          "__module__": __name__}
    for i, f in enumerate(fields):
        ns[f] = make_property(i)
    return type(name, (tuple,), ns)


max = _structseq("max", ("values", "indices"))
min = _structseq("min", ("values", "indices"))
aminmax = _structseq("aminmax", ("min", "max"))
sort = _structseq("sort", ("values", "indices"))
topk = _structseq("topk", ("values", "indices"))
kthvalue = _structseq("kthvalue", ("values", "indices"))
median = _structseq("median", ("values", "indices"))
nanmedian = _structseq("nanmedian", ("values", "indices"))
mode = _structseq("mode", ("values", "indices"))
cummax = _structseq("cummax", ("values", "indices"))
cummin = _structseq("cummin", ("values", "indices"))
histogram = _structseq("histogram", ("hist", "bin_edges"))
frexp = _structseq("frexp", ("mantissa", "exponent"))
histogramdd = _structseq("histogramdd", ("hist", "bin_edges"))
linalg_cholesky_ex = _structseq("linalg_cholesky_ex", ("L", "info"))
linalg_eigh = _structseq("linalg_eigh", ("eigenvalues", "eigenvectors"))
linalg_eig = _structseq("linalg_eig", ("eigenvalues", "eigenvectors"))
linalg_polar = _structseq("linalg_polar", ("U", "H"))
linalg_ldl_factor = _structseq("linalg_ldl_factor", ("LD", "pivots"))
linalg_ldl_factor_ex = _structseq("linalg_ldl_factor_ex", ("LD", "pivots", "info"))
linalg_inv_ex = _structseq("linalg_inv_ex", ("inverse", "info"))
linalg_lstsq = _structseq("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
linalg_lu = _structseq("linalg_lu", ("P", "L", "U"))
linalg_lu_factor = _structseq("linalg_lu_factor", ("LU", "pivots"))
linalg_lu_factor_ex = _structseq("linalg_lu_factor_ex", ("LU", "pivots", "info"))
linalg_qr = _structseq("linalg_qr", ("Q", "R"))
linalg_slogdet = _structseq("linalg_slogdet", ("sign", "logabsdet"))
linalg_solve_ex = _structseq("linalg_solve_ex", ("result", "info"))
linalg_svd = _structseq("linalg_svd", ("U", "S", "Vh"))
slogdet = _structseq("slogdet", ("sign", "logabsdet"))
svd = _structseq("svd", ("U", "S", "V"))
qr = _structseq("qr", ("Q", "R"))
triangular_solve = _structseq("triangular_solve", ("solution", "cloned_coefficient"))
lu_unpack = _structseq("lu_unpack", ("P", "L", "U"))
_lu_with_info = _structseq("_lu_with_info", ("LU", "pivots", "info"))
