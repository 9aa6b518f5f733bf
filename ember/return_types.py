"""torch.return_types: the named tuples ops with named results return (`torch.max(x, 1)` gives a
`torch.return_types.max(values=..., indices=...)`). The classes are made once, on first use, from
the op's schema (`-> (Tensor values, Tensor indices)`), and are the same classes the ops return."""
from ._bindings.out import _return_type
from ._dispatch import dispatcher as _dispatcher


# results of functions written in Python rather than generated from a schema
_WRITTEN = {
    "geqrf": ("a", "tau"), "histogram": ("hist", "bin_edges"), "histogramdd": ("hist", "bin_edges"),
    "linalg_inv_ex": ("inverse", "info"), "linalg_solve_ex": ("result", "info"),
    "linalg_cholesky_ex": ("L", "info"), "linalg_ldl_factor_ex": ("LD", "pivots", "info"),
    "linalg_ldl_factor": ("LD", "pivots"), "linalg_slogdet": ("sign", "logabsdet"),
    "linalg_qr": ("Q", "R"), "linalg_svd": ("U", "S", "Vh"),
    "linalg_eigh": ("eigenvalues", "eigenvectors"), "linalg_eig": ("eigenvalues", "eigenvectors"),
    "linalg_lstsq": ("solution", "residuals", "rank", "singular_values"),
    "linalg_lu": ("P", "L", "U"), "linalg_lu_factor": ("LU", "pivots"),
    "linalg_lu_factor_ex": ("LU", "pivots", "info"), "lu_unpack": ("P", "L", "U"),
    "triangular_solve": ("solution", "cloned_coefficient"), "slogdet": ("sign", "logabsdet"),
    "qr": ("Q", "R"), "svd": ("U", "S", "V"),
}


def _fields(name):
    if name.endswith("_out"):  # the class an op's out= variant returns: the op's fields
        return _fields(name[:-4])
    if name in _WRITTEN:
        return _WRITTEN[name]
    for namespace in ("aten",):
        packet = _dispatcher._packets.get((namespace, name))
        if packet is None:
            continue
        for overload in packet._overloads.values():
            names = overload.schema.return_names
            if len(names) > 1 and all(names):
                return tuple(names)
    return None


def __getattr__(name):
    fields = None if name.startswith("__") else _fields(name)
    if fields is None:
        raise AttributeError(f"module 'torch.return_types' has no attribute '{name}'")
    return _return_type(name, fields)


def __dir__():
    names = set(_WRITTEN) | {name for ns, name in _dispatcher._packets
                             if ns == "aten" and _fields(name)}
    return sorted(names | {f"{name}_out" for name in names})
