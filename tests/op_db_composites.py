"""The op test table's rows for the composite, linalg and random public callables added for
coverage (issue 3 item 2): diff, cov, corrcoef, trapezoid, histogram, isin, the window
functions, renorm, the *_copy variants, cholesky_solve, matrix_exp, binomial, ...

Same conventions as op_db.py, which appends these rows to its OPS. Factories without tensor
inputs take their dtype as a DT sample argument. The random samplers are checked in
distribution: the op returns the mean of several thousand draws (ember's draws are not torch's
bit stream), compared with a tolerance of several standard errors.
"""
import numpy as np

from op_db import (ALL, FLOATS, NUMBERS, DT, ErrorInput, OpInfo, Sample, T, f32, f64, i64,
                   make, round_to)

REAL = ("float32", "float64")


def _diff_samples(dtype, rng):
    x = make(rng, (3, 4), dtype)
    return [Sample(x), Sample(make(rng, (5,), dtype), 2), Sample(x, 1, 0),
            Sample(x, 2, -1, make(rng, (3, 2), dtype), make(rng, (3, 1), dtype)),
            Sample(make(rng, (4, 3), dtype, "transposed"), 1, 1), Sample(x, 0),
            Sample(make(rng, (2, 3), dtype), 5)]


def _cov_samples(dtype, rng):
    out = [Sample(make(rng, (3, 5), dtype)), Sample(make(rng, (6,), dtype)),
           Sample(make(rng, (2, 4), dtype), correction=0),
           Sample(make(rng, (2, 4), dtype), correction=2)]
    if dtype in FLOATS:
        fw = T(rng.integers(1, 4, 5), "int64", grad=False)
        aw = make(rng, (5,), dtype, low=0.5, high=2)
        out += [Sample(make(rng, (2, 5), dtype), fweights=fw),
                Sample(make(rng, (2, 5), dtype), aweights=aw),
                Sample(make(rng, (2, 5), dtype), fweights=fw, aweights=aw, correction=0)]
    return out


def _cov_errors():
    return [ErrorInput(f32(2, 2, 2), match="two or fewer"),
            ErrorInput(f32(2, 4), fweights=f32(4), match="integral"),
            ErrorInput(f32(2, 4), aweights=i64(4), match="floating point"),
            ErrorInput(f32(2, 4), aweights=f32(3), match="same numel")]


def _vectors(n_list):
    return lambda dtype, rng: [Sample(*[make(rng, (n,), dtype) for n in ns]) for ns in n_list]


def _trapezoid_samples(dtype, rng):
    y = make(rng, (3, 4), dtype)
    return [Sample(y), Sample(y, make(rng, (4,), dtype)), Sample(y, make(rng, (3, 4), dtype)),
            Sample(y, dx=0.5), Sample(y, dim=0), Sample(y, make(rng, (3,), dtype), dim=0),
            Sample(make(rng, (2, 0), dtype))]


def _gradient_samples(dtype, rng):
    def coords(n):
        return T(round_to(np.cumsum(rng.uniform(0.5, 1.5, n)), dtype), dtype, grad=False)
    x = make(rng, (3, 4), dtype)
    return [Sample(x), Sample(x, spacing=2.0, dim=1), Sample(x, spacing=[0.5, 2.0],
                                                              edge_order=2),
            Sample(make(rng, (5,), dtype), coords(5)),
            Sample(make(rng, (5,), dtype), coords(5), edge_order=2),
            Sample(x, coords(3), coords(4), edge_order=2),
            Sample(make(rng, (3, 4), dtype, "transposed"), dim=(0, 1))]


def _window_samples(dtype, rng):
    return [Sample(n, periodic, dtype=DT(dtype)) for n in (0, 1, 2, 5, 8)
            for periodic in (True, False)]


def _window(name, *extra):
    """A window function's row; `extra` are its shape parameters, passed after periodic."""
    errors = None if extra else lambda: [
        ErrorInput(-1, match="non-negative"),
        ErrorInput(3, dtype=DT("int64"), match="floating point")]
    return OpInfo(f"torch.{name}", lambda m, *a, **kw: getattr(m, name)(*a, *extra, **kw),
                  FLOATS, _window_samples, grad=False, errors=errors, other_dtypes_raise=False)


def _histogram_samples(dtype, rng):
    # inputs without grad: torch marks the (non-differentiable) counts as requiring grad
    x = make(rng, (20,), dtype, grad=False)
    w = make(rng, (20,), dtype, low=0, high=2, grad=False)
    edges = T(np.array([-3, -1, 0, 0.5, 2.5]), dtype, grad=False)
    return [Sample(x, 4), Sample(x, 5, density=True), Sample(x, 3, range=(-1.0, 1.0)),
            Sample(x, 4, weight=w), Sample(x, edges), Sample(x, edges, weight=w, density=True),
            Sample(make(rng, (3, 4), dtype, grad=False), 6),
            Sample(T(np.full(4, 2.0), dtype, grad=False), 3)]


def _histogramdd_samples(dtype, rng):
    x = make(rng, (12, 2), dtype, grad=False)
    w = make(rng, (12,), dtype, low=0, high=2, grad=False)
    return [Sample(x, 3), Sample(x, [2, 4], density=True),
            Sample(x, [3, 2], range=[-1.0, 1.0, 0.0, 3.0], weight=w),
            Sample(make(rng, (2, 5, 3), dtype, grad=False), 2, density=True),
            Sample(make(rng, (7, 1), dtype, grad=False), 4)]


def _isin_samples(dtype, rng):
    a = make(rng, (4, 5), dtype, low=-3, high=3)
    b = make(rng, (6,), dtype, low=-3, high=3)
    return [Sample(a, b), Sample(a, b, invert=True), Sample(a, 2), Sample(a, a, assume_unique=True)]


def _unravel_samples(dtype, rng):
    return [Sample(T(rng.integers(0, 24, (5,)), dtype, grad=False), (2, 3, 4)),
            Sample(T(np.array(7), dtype, grad=False), 10),
            Sample(T(rng.integers(0, 12, (2, 3)), dtype, grad=False), [3, 4])]


def _renorm_samples(dtype, rng):
    x = make(rng, (3, 4), dtype)
    return [Sample(x, 2, 0, 2.0), Sample(x, 1, 1, 3.0), Sample(make(rng, (2, 3, 2), dtype), 3, -1,
                                                              1.5), Sample(x, 2, 0, 100.0)]


def _square(rng, dtype, n=3, batch=()):
    """A well-conditioned matrix: identity-dominant."""
    data = rng.uniform(-0.5, 0.5, batch + (n, n)) + 2 * np.eye(n)
    return T(data.astype(dtype), dtype)


def _triangular_samples(dtype, rng):
    return [Sample(_square(rng, dtype), make(rng, (3, 2), dtype), upper=True),
            Sample(_square(rng, dtype), make(rng, (3, 2), dtype), upper=False),
            Sample(_square(rng, dtype, batch=(2,)), make(rng, (2, 3, 3), dtype), upper=False,
                   unitriangular=True),
            Sample(_square(rng, dtype), make(rng, (2, 3), dtype), upper=True, left=False)]


def _singular_triangular_samples(dtype, rng):
    """A zero on the diagonal: inf and nan (LAPACK's trsm), not an error."""
    def singular(batch=()):
        A = make(rng, batch + (3, 3), dtype, grad=False)
        A.data[..., 1, 1] = 0
        return A
    return [Sample(singular(), make(rng, (3, 2), dtype), upper=True),
            Sample(singular((2,)), make(rng, (2, 3), dtype), upper=False, left=False)]


def _cholesky_samples(dtype, rng):
    lower = T(np.tril(_square(rng, dtype).data), dtype)
    upper = T(np.triu(_square(rng, dtype, batch=(2,)).data), dtype)
    return [Sample(make(rng, (3, 2), dtype), lower),
            Sample(make(rng, (2, 3, 2), dtype), upper, True)]


def _cholesky_inverse_samples(dtype, rng):
    return [Sample(T(np.tril(_square(rng, dtype).data), dtype)),
            Sample(T(np.triu(_square(rng, dtype, batch=(2,)).data), dtype), True)]


def _matrix_exp_samples(dtype, rng):
    return [Sample(make(rng, (3, 3), dtype, low=-1, high=1)),
            Sample(make(rng, (2, 2, 2), dtype, low=-2, high=2)),
            Sample(make(rng, (4, 4), dtype, low=-3, high=3)), Sample(make(rng, (0, 0), dtype))]


def _reflectors(rng, dtype, shape):
    """geqrf's output computed in NumPy's float64 QR, as data both libraries receive."""
    import scipy.linalg.lapack as lapack
    a = rng.uniform(-1, 1, shape)
    qr, tau = zip(*[lapack.dgeqrf(m)[:2] for m in a.reshape((-1,) + shape[-2:])])
    k = min(shape[-2:])
    return (T(np.array(qr).reshape(shape).astype(dtype), dtype),
            T(np.array(tau).reshape(shape[:-2] + (k,)).astype(dtype), dtype))


def _reflector_samples(dtype, rng):
    return [Sample(*_reflectors(rng, dtype, (4, 3))), Sample(*_reflectors(rng, dtype, (3, 3))),
            Sample(*_reflectors(rng, dtype, (2, 3, 2)))]


def _ormqr_samples(dtype, rng):
    out = []
    for left, transpose in ((True, False), (True, True), (False, False), (False, True)):
        A, tau = _reflectors(rng, dtype, (4, 3))
        other = make(rng, (4, 2) if left else (2, 4), dtype)
        out.append(Sample(A, tau, other, left, transpose))
    return out


def _eig_fixed_phase(m, A):
    """Eigenvalues and eigenvectors, each eigenvector scaled to make its largest entry real and
    positive: LAPACK builds may return a vector times -1 (any unit phase is an eigenvector)."""
    values, vectors = m.linalg.eig(A)
    big = vectors.abs().argmax(-2, keepdim=True)
    top = vectors.gather(-2, big)
    return m.view_as_real(values), m.view_as_real(vectors * (top.abs() / top))


def _eig_samples(dtype, rng):
    rot = T(np.array([[0., -1.], [1., 0.]]), dtype, grad=False)      # complex eigenvalues
    return [Sample(make(rng, (3, 3), dtype, grad=False)), Sample(rot),
            Sample(make(rng, (2, 4, 4), dtype, grad=False))]


def _lowrank(name):
    def op(m, A, **kw):
        m.manual_seed(0)
        U, S, V = getattr(m, name)(A, **kw)
        return S, (U * S.unsqueeze(-2)).matmul(V.mH)
    return op


def _lu_samples(dtype, rng):
    return [Sample(make(rng, (3, 3), dtype)), Sample(make(rng, (2, 4, 4), dtype)),
            Sample(make(rng, (3, 5), dtype)), Sample(make(rng, (5, 3), dtype))]


def _lu_unpack(m, A):
    LU, pivots = m.linalg.lu_factor(A)
    return m.lu_unpack(LU, pivots)


def _lu_solve_samples(dtype, rng):
    return [Sample(_square(rng, dtype), make(rng, (3, 2), dtype)),
            Sample(_square(rng, dtype, batch=(2,)), make(rng, (2, 3, 1), dtype), adjoint=True),
            Sample(_square(rng, dtype), make(rng, (2, 3), dtype), left=False)]


def _lu_solve(deprecated):
    def op(m, A, B, **kw):
        LU, pivots = m.linalg.lu_factor(A)
        if deprecated:
            return m.lu_solve(B, LU, pivots)
        return m.linalg.lu_solve(LU, pivots, B, **kw)
    return op


def _frombuffer(m, dt, **kw):
    buffer = bytearray(np.arange(32, dtype=np.uint8).tobytes())
    t = m.frombuffer(buffer, dtype=dt, **kw)
    t[0] = 5                                    # writes through to the buffer
    return t.clone(), m.tensor(list(buffer[:8]))


def _mean_of_draws(name):
    def op(m, *args):
        g = m.Generator().manual_seed(0)
        args = [a.detach().expand(4000, *a.shape) for a in args]
        draws = getattr(m, name)(*args, generator=g)
        return draws.to(m.float64).mean(0)
    return op


def _copy_row(name, samples, **kw):
    return OpInfo(f"torch.{name}", lambda m, *a, **k: getattr(m, name)(*a, **k), ALL, samples,
                  **kw)


def _x34(*extra, **kwextra):
    return lambda dtype, rng: [Sample(make(rng, (3, 4), dtype), *extra, **kwextra),
                               Sample(make(rng, (3, 4), dtype, "transposed"), *extra,
                                      **kwextra)]


def _metadata_samples(dtype, rng):
    return [Sample(make(rng, (3, 4), dtype), [3, 4], [4, 1], DT(dtype)),
            Sample(make(rng, (4, 3), dtype, "transposed"), [4, 3], [1, 4]),
            Sample(make(rng, (2,), dtype), None, None, None, device="cpu")]


def _metadata_errors():
    return [ErrorInput(f32(3), [4], match=r"sizes mismatch! Expected: \[4\], Got: \[3\]"),
            ErrorInput(f32(3), None, [2], match=r"strides mismatch! Expected: \[2\], Got: \[1\]"),
            ErrorInput(i64(3), None, None, DT("float32"), match="Expected: Float, Got: long int"),
            ErrorInput(f32(3), device="meta", match="device mismatch! Expected: meta, Got: cpu")]


COMPOSITE_OPS = [
    OpInfo("torch._assert_tensor_metadata", lambda m, *a, **kw: m._assert_tensor_metadata(*a, **kw),
           ALL, _metadata_samples, errors=_metadata_errors, grad=False, other_dtypes_raise=False),
    OpInfo("torch.diff", lambda m, *a: m.diff(*a), ALL, _diff_samples,
           errors=lambda: [ErrorInput(f32(), match="one-dimensional"),
                           ErrorInput(f32(3), -1, match="non-negative")]),
    OpInfo("diff", lambda m, x, *a: x.diff(*a), ALL, _diff_samples),
    OpInfo("torch.cov", lambda m, *a, **kw: m.cov(*a, **kw), NUMBERS, _cov_samples,
           errors=_cov_errors, other_dtypes_raise=False),
    OpInfo("cov", lambda m, x, **kw: x.cov(**kw), FLOATS, _cov_samples,
           other_dtypes_raise=False, tol={"bfloat16": (5e-2, 5e-2), "float16": (1e-2, 1e-2)}),
    OpInfo("torch.corrcoef", lambda m, x: m.corrcoef(x), FLOATS,
           lambda dtype, rng: [Sample(make(rng, (3, 5), dtype)), Sample(make(rng, (4,), dtype))],
           other_dtypes_raise=False, tol={"bfloat16": (5e-2, 5e-2), "float16": (1e-2, 1e-2)}),
    OpInfo("torch.cartesian_prod", lambda m, *a: m.cartesian_prod(*a), ALL,
           _vectors([(3,), (2, 3), (2, 1, 3)]),
           errors=lambda: [ErrorInput(f32(2, 2), match="1D")]),
    OpInfo("torch.combinations", lambda m, *a, **kw: m.combinations(*a, **kw), ALL,
           lambda dtype, rng: [Sample(make(rng, (4,), dtype)),
                               Sample(make(rng, (4,), dtype), 3),
                               Sample(make(rng, (3,), dtype), 2, with_replacement=True),
                               Sample(make(rng, (2,), dtype), 3),
                               Sample(make(rng, (3,), dtype), 0)],
           errors=lambda: [ErrorInput(f32(2, 2), match="1D")]),
    OpInfo("torch.block_diag", lambda m, *a: m.block_diag(*a), ALL,
           lambda dtype, rng: [Sample(make(rng, (2, 3), dtype), make(rng, (), dtype),
                                      make(rng, (2,), dtype), make(rng, (1, 2), dtype)),
                               Sample(make(rng, (2, 2), dtype))],
           errors=lambda: [ErrorInput(f32(2, 2, 2), match="2 or fewer")]),
    OpInfo("torch.diagflat", lambda m, *a: m.diagflat(*a), ALL,
           lambda dtype, rng: [Sample(make(rng, (2, 2), dtype)), Sample(make(rng, (3,), dtype), 1),
                               Sample(make(rng, (3,), dtype), -2)]),
    OpInfo("diagflat", lambda m, x, *a: x.diagflat(*a), ALL,
           lambda dtype, rng: [Sample(make(rng, (2, 2), dtype), 1)]),
    OpInfo("torch.vander", lambda m, *a, **kw: m.vander(*a, **kw), NUMBERS,
           lambda dtype, rng: [Sample(make(rng, (4,), dtype, low=-2, high=2)),
                               Sample(make(rng, (3,), dtype, low=-2, high=2), N=5),
                               Sample(make(rng, (3,), dtype, low=-2, high=2), 2, True),
                               Sample(make(rng, (3,), dtype), N=0)],
           errors=lambda: [ErrorInput(f32(2, 2), match="one-dimensional"),
                           ErrorInput(f32(2), N=-1, match="non-negative")],
           # torch's own backward of vander fails (an in-place cumprod); gradcheck checks ours
           grad=False, gradcheck=True, other_dtypes_raise=False),
    OpInfo("torch.gradient", lambda m, x, *coords, **kw: m.gradient(
        x, **(dict(spacing=coords) if coords else {}), **kw), FLOATS, _gradient_samples,
        other_dtypes_raise=False, tol={"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)},
        errors=lambda: [ErrorInput(f32(2), edge_order=2, match="edge_order\\+1"),
                        ErrorInput(f32(3), edge_order=3, match="edge_order=1"),
                        ErrorInput(f32(3, 3), spacing=[1.0, 2.0, 3.0], match="length")]),
    OpInfo("torch.gradient.int", lambda m, x, **kw: m.gradient(x, **kw), ("int64", "int32"),
           lambda dtype, rng: [Sample(make(rng, (3, 4), dtype)),
                               Sample(make(rng, (5,), dtype), spacing=2, edge_order=2)],
           grad=False, other_dtypes_raise=False),
    OpInfo("torch.trapezoid", lambda m, *a, **kw: m.trapezoid(*a, **kw), FLOATS,
           _trapezoid_samples, other_dtypes_raise=False,
           errors=lambda: [ErrorInput(f32(3), 0.5, match="dx")]),
    OpInfo("torch.trapz", lambda m, *a, **kw: m.trapz(*a, **kw), FLOATS,
           lambda dtype, rng: _trapezoid_samples(dtype, rng)[:4], other_dtypes_raise=False),
    OpInfo("torch.cumulative_trapezoid", lambda m, *a, **kw: m.cumulative_trapezoid(*a, **kw),
           FLOATS, _trapezoid_samples, other_dtypes_raise=False,
           errors=lambda: [ErrorInput(f32(3), 0.5, match="dx")]),
    OpInfo("torch.histogram", lambda m, *a, **kw: m.histogram(*a, **kw), REAL,
           _histogram_samples, grad=False, other_dtypes_raise=False,
           errors=lambda: [ErrorInput(i64(5), 3, match="not implemented"),
                           ErrorInput(f32(5), 0, match="bins"),
                           ErrorInput(f32(5), 3, weight=f32(4), match="same shape")]),
    OpInfo("histogram", lambda m, x, *a, **kw: x.histogram(*a, **kw), REAL,
           lambda dtype, rng: _histogram_samples(dtype, rng)[:2], grad=False,
           other_dtypes_raise=False),
    OpInfo("torch.histogramdd", lambda m, *a, **kw: m.histogramdd(*a, **kw), REAL,
           _histogramdd_samples, grad=False, other_dtypes_raise=False,
           errors=lambda: [ErrorInput(i64(5, 2), 3, match="not implemented"),
                           ErrorInput(f32(5, 2), [2, 3, 4], match="size of bins")]),
    OpInfo("torch.histogramdd.edges", lambda m, x, *edges, **kw: m.histogramdd(
        x, list(edges), **kw), REAL,
        lambda dtype, rng: [Sample(make(rng, (12, 2), dtype, grad=False),
                                   T(np.array([-3, 0, 3.]), dtype, grad=False),
                                   T(np.array([-2, -1, 1, 2.]), dtype, grad=False),
                                   density=density) for density in (False, True)],
        grad=False, other_dtypes_raise=False),
    OpInfo("torch.isin", lambda m, *a, **kw: m.isin(*a, **kw), NUMBERS, _isin_samples,
           grad=False, other_dtypes_raise=False),
    OpInfo("torch.unravel_index", lambda m, *a: m.unravel_index(*a), ("int64", "int32"),
           _unravel_samples, grad=False, other_dtypes_raise=False,
           errors=lambda: [ErrorInput(f32(3), (2, 2), match="integer"),
                           ErrorInput(i64(3, low=0, high=3), (2, -1), match="negative")]),
    OpInfo("torch.nonzero_static", lambda m, x, **kw: m.nonzero_static(x, **kw), ALL,
           lambda dtype, rng: [Sample(make(rng, (3, 4), dtype), size=s) for s in (0, 3, 20)] +
           [Sample(make(rng, (5,), dtype), size=8, fill_value=7),
            Sample(make(rng, (), dtype), size=2)], grad=False),
    OpInfo("nonzero_static", lambda m, x, **kw: x.nonzero_static(**kw), ALL,
           lambda dtype, rng: [Sample(make(rng, (3, 4), dtype), size=6)], grad=False),
    OpInfo("torch.nonzero", lambda m, x, **kw: m.nonzero(x, **kw), ALL,
           lambda dtype, rng: [Sample(make(rng, (3, 4), dtype)), Sample(make(rng, (5,), dtype)),
                               Sample(make(rng, (), dtype)),
                               Sample(make(rng, (2, 3), dtype), as_tuple=True)], grad=False),
    OpInfo("torch.range", lambda m, *a, **kw: m.range(*a, **kw), NUMBERS,
           lambda dtype, rng: [Sample(1, 4, dtype=DT(dtype)), Sample(0, 2, 0.5),
                               Sample(5, 1, -1, dtype=DT(dtype)), Sample(-1, 1.5, 0.25)],
           grad=False, other_dtypes_raise=False),
    _window("hann_window"), _window("hamming_window"), _window("hamming_window", 0.6, 0.4),
    _window("bartlett_window"), _window("blackman_window"), _window("kaiser_window"),
    _window("kaiser_window", 5.0),
    OpInfo("torch.renorm", lambda m, *a: m.renorm(*a), FLOATS, _renorm_samples,
           errors=lambda: [ErrorInput(f32(2, 2), 0, 0, 1.0, match="non-positive"),
                           ErrorInput(f32(2, 2), 2, 0, -1.0, match="maxnorm"),
                           ErrorInput(f32(3), 2, 0, 1.0, match="2 dimensions")],
           other_dtypes_raise=False, tol={"float16": (5e-3, 5e-3)}),
    OpInfo("renorm", lambda m, x, *a: x.renorm(*a), FLOATS, _renorm_samples,
           other_dtypes_raise=False, tol={"float16": (5e-3, 5e-3)}),
    OpInfo("renorm_", lambda m, x, *a: x.clone().renorm_(*a), FLOATS, _renorm_samples,
           other_dtypes_raise=False, tol={"float16": (5e-3, 5e-3)}),
    OpInfo("torch.dist", lambda m, *a: m.dist(*a), FLOATS,
           lambda dtype, rng: [Sample(make(rng, (3, 4), dtype), make(rng, (4,), dtype), p)
                               for p in (2, 1, 3.5, float("inf"))],
           other_dtypes_raise=False, tol={"float16": (5e-3, 5e-3), "bfloat16": (3e-2, 3e-2)}),
    OpInfo("dist", lambda m, x, y: x.dist(y), FLOATS,
           lambda dtype, rng: [Sample(make(rng, (3, 4), dtype), make(rng, (3, 4), dtype))],
           other_dtypes_raise=False, tol={"float16": (5e-3, 5e-3), "bfloat16": (3e-2, 3e-2)}),
    OpInfo("torch.inner", lambda m, *a: m.inner(*a), REAL,
           lambda dtype, rng: [Sample(make(rng, (2, 3), dtype), make(rng, (4, 3), dtype)),
                               Sample(make(rng, (3,), dtype), make(rng, (3,), dtype)),
                               Sample(make(rng, (), dtype), make(rng, (2, 3), dtype)),
                               Sample(make(rng, (2, 2, 3), dtype), make(rng, (3,), dtype))],
           errors=lambda: [ErrorInput(f32(2, 3), f32(4), match="last dimension")],
           other_dtypes_raise=False),
    OpInfo("inner", lambda m, x, y: x.inner(y), REAL,
           lambda dtype, rng: [Sample(make(rng, (2, 3), dtype), make(rng, (3,), dtype))],
           other_dtypes_raise=False),
    OpInfo("torch.chain_matmul", lambda m, *a: m.chain_matmul(*a), REAL,
           lambda dtype, rng: [Sample(make(rng, (2, 3), dtype), make(rng, (3, 4), dtype),
                                      make(rng, (4, 2), dtype)), Sample(make(rng, (2, 3), dtype))],
           other_dtypes_raise=False),
    OpInfo("torch.index_put", lambda m, x, i, v, *a: m.index_put(x, (i,), v, *a), ALL,
           lambda dtype, rng: [Sample(make(rng, (4, 3), dtype), T(np.array([0, 2]), "int64"),
                                      make(rng, (2, 3), dtype)),
                               Sample(make(rng, (4, 3), dtype), T(np.array([1, 1]), "int64"),
                                      make(rng, (3,), dtype), True)]),
    OpInfo("torch.index_put_", lambda m, x, i, v: m.index_put_(x.clone(), (i,), v), ALL,
           lambda dtype, rng: [Sample(make(rng, (4, 3), dtype), T(np.array([3, 0]), "int64"),
                                      make(rng, (2, 3), dtype))]),
    OpInfo("torch.split_with_sizes", lambda m, *a: m.split_with_sizes(*a), ALL,
           lambda dtype, rng: [Sample(make(rng, (5, 4), dtype), [2, 3]),
                               Sample(make(rng, (3, 4), dtype), [3, 1], 1),
                               Sample(make(rng, (3, 4), dtype), (1, 0, 3), 1)]),
    OpInfo("split_with_sizes", lambda m, x, *a: x.split_with_sizes(*a), ALL,
           lambda dtype, rng: [Sample(make(rng, (5, 4), dtype), [4, 1])]),
    OpInfo("torch.unsafe_split", lambda m, *a: m.unsafe_split(*a), ALL,
           lambda dtype, rng: [Sample(make(rng, (5, 4), dtype), 2),
                               Sample(make(rng, (3, 4), dtype), 3, 1)]),
    OpInfo("torch.unsafe_chunk", lambda m, *a: m.unsafe_chunk(*a), ALL,
           lambda dtype, rng: [Sample(make(rng, (5, 4), dtype), 2),
                               Sample(make(rng, (3, 4), dtype), 3, 1)]),
    OpInfo("torch.unsafe_split_with_sizes", lambda m, *a: m.unsafe_split_with_sizes(*a), ALL,
           lambda dtype, rng: [Sample(make(rng, (5, 4), dtype), [1, 4])]),
    OpInfo("unsafe_split", lambda m, x, *a: x.unsafe_split(*a), ALL,
           lambda dtype, rng: [Sample(make(rng, (5, 4), dtype), 3)]),
    OpInfo("unsafe_chunk", lambda m, x, *a: x.unsafe_chunk(*a), ALL,
           lambda dtype, rng: [Sample(make(rng, (5, 4), dtype), 3)]),
    # the Scalar overloads run_decompositions records (ember/_aten/scalar_overloads.py)
    OpInfo("aten.mul.Scalar", lambda m, x, s: m.ops.aten.mul.Scalar(x, s), ALL,
           lambda dtype, rng: [Sample(make(rng, (3, 4), dtype), 2),
                               Sample(make(rng, (2,), dtype), -0.5)]),
    OpInfo("aten.eq.Scalar", lambda m, x, s: m.ops.aten.eq.Scalar(x, s), ALL,
           lambda dtype, rng: [Sample(make(rng, (3, 4), dtype), 0),
                               Sample(make(rng, (3,), dtype), float("-inf"))]),
    # Tensor.detach's op, called while a __torch_dispatch__ handler must see it
    OpInfo("aten.detach", lambda m, x: m.ops.aten.detach.default(x), ALL, _x34(), grad=False),
    OpInfo("aten._local_scalar_dense", lambda m, x: m.ops.aten._local_scalar_dense.default(x),
           ALL, lambda dtype, rng: [Sample(make(rng, (1,), dtype)), Sample(make(rng, (), dtype))],
           grad=False),
    OpInfo("aten.any.dim", lambda m, x, *a: m.ops.aten.any.dim(x, *a), ALL,
           lambda dtype, rng: [Sample(make(rng, (3, 4), dtype), -1, True),
                               Sample(make(rng, (3, 4), dtype), 0)]),
    OpInfo("unflatten", lambda m, x, *a: x.unflatten(*a), ALL,
           lambda dtype, rng: [Sample(make(rng, (3, 4), dtype), 1, (2, 2)),
                               Sample(make(rng, (4, 3), dtype), 0, (2, -1))]),
    # the *_copy variants: contiguous results, gradients through the view op
    _copy_row("view_copy", lambda dtype, rng: [Sample(make(rng, (3, 4), dtype), [4, 3]),
                                              Sample(make(rng, (3, 4), dtype), [-1])]),
    OpInfo("torch.view_copy.dtype", lambda m, x: m.view_copy(x, m.uint8), ALL,
           lambda dtype, rng: [Sample(make(rng, (3, 4), dtype, grad=False))], grad=False),
    _copy_row("permute_copy", _x34([1, 0])),
    _copy_row("t_copy", _x34()),
    _copy_row("transpose_copy", _x34(0, 1)),
    _copy_row("squeeze_copy", lambda dtype, rng: [Sample(make(rng, (3, 1, 2), dtype)),
                                                 Sample(make(rng, (3, 1, 2), dtype), 1),
                                                 Sample(make(rng, (1, 3, 1), dtype), (0, 2))]),
    _copy_row("unsqueeze_copy", _x34(1)),
    _copy_row("select_copy", _x34(1, 2)),
    _copy_row("slice_copy", _x34(1, 1, None, 2)),
    _copy_row("diagonal_copy", _x34(1)),
    _copy_row("expand_copy", lambda dtype, rng: [Sample(make(rng, (3, 1), dtype), [2, 3, 4])]),
    _copy_row("unbind_copy", _x34(1)),
    _copy_row("split_copy", _x34(2, 1)),
    _copy_row("split_with_sizes_copy", _x34([1, 2])),
    # torch marks detach_copy's result as requiring grad (with no derivative): inputs without
    _copy_row("detach_copy", lambda dtype, rng: [Sample(make(rng, (3, 4), dtype, grad=False))],
              grad=False),
    _copy_row("alias_copy", _x34()),
    _copy_row("unfold_copy", _x34(1, 2, 1)),
    _copy_row("as_strided_copy", lambda dtype, rng: [Sample(make(rng, (3, 4), dtype), (2, 2),
                                                            (1, 2), 1)]),
    _copy_row("as_strided_scatter", lambda dtype, rng: [
        Sample(make(rng, (3, 4), dtype), make(rng, (2, 2), dtype), (2, 2), (1, 2), 1)],
        # torch 2.13's gradient for `input` is wrong (it keeps the overwritten elements'
        # gradient and drops the rest): values here, gradcheck checks ember's gradient
        grad=False, gradcheck=True,
        errors=lambda: [ErrorInput(f32(3, 4), f32(3), (2, 2), (1, 2), match="size")]),
    # linear algebra
    OpInfo("linalg.solve_triangular", lambda m, *a, **kw: m.linalg.solve_triangular(*a, **kw),
           REAL, _triangular_samples, other_dtypes_raise=False, tol={"float32": (1e-5, 1e-5)},
           errors=lambda: [ErrorInput(f32(2, 2), f32(3, 2), upper=True, match="Incompatible")]),
    OpInfo("linalg.solve_triangular_singular",
           lambda m, *a, **kw: m.linalg.solve_triangular(*a, **kw), REAL,
           _singular_triangular_samples, other_dtypes_raise=False, grad=False),
    OpInfo("torch.triangular_solve", lambda m, b, A, *a: m.triangular_solve(b, A, *a), REAL,
           lambda dtype, rng: [Sample(make(rng, (3, 2), dtype), _square(rng, dtype)),
                               Sample(make(rng, (3, 2), dtype), _square(rng, dtype), False, True),
                               Sample(make(rng, (3, 2), dtype), _square(rng, dtype), True, False,
                                      True)],
           other_dtypes_raise=False, tol={"float32": (1e-5, 1e-5)}),
    OpInfo("triangular_solve", lambda m, b, A: b.triangular_solve(A), REAL,
           lambda dtype, rng: [Sample(make(rng, (3, 2), dtype), _square(rng, dtype))],
           other_dtypes_raise=False, tol={"float32": (1e-5, 1e-5)}),
    # cholesky_solve/cholesky_inverse read only L's triangle but PyTorch's gradient for L is
    # the full-matrix formula (nonzero off the triangle), which finite differences cannot see:
    # gradients against torch's, no gradcheck
    OpInfo("torch.cholesky_solve", lambda m, *a: m.cholesky_solve(*a), REAL, _cholesky_samples,
           gradcheck=False, other_dtypes_raise=False, tol={"float32": (1e-5, 1e-5)},
           errors=lambda: [ErrorInput(f32(2, 2), f32(3, 3), match="Incompatible"),
                           ErrorInput(f32(3, 2), f64(3, 3), match="dtype")]),
    OpInfo("cholesky_solve", lambda m, x, *a: x.cholesky_solve(*a), REAL, _cholesky_samples,
           gradcheck=False, other_dtypes_raise=False, tol={"float32": (1e-5, 1e-5)}),
    OpInfo("torch.cholesky_inverse", lambda m, *a: m.cholesky_inverse(*a), REAL,
           _cholesky_inverse_samples, gradcheck=False, other_dtypes_raise=False,
           tol={"float32": (1e-5, 1e-5)},
           errors=lambda: [ErrorInput(f32(2, 3), match="square")]),
    OpInfo("cholesky_inverse", lambda m, x, *a: x.cholesky_inverse(*a), REAL,
           _cholesky_inverse_samples, gradcheck=False, other_dtypes_raise=False,
           tol={"float32": (1e-5, 1e-5)}),
    OpInfo("torch.matrix_exp", lambda m, x: m.matrix_exp(x), REAL, _matrix_exp_samples,
           other_dtypes_raise=False, tol={"float32": (1e-5, 1e-5)},
           errors=lambda: [ErrorInput(i64(2, 2), match="floating point"),
                           ErrorInput(f32(2, 3), match="square")]),
    OpInfo("linalg.matrix_exp", lambda m, x: m.linalg.matrix_exp(x), REAL, _matrix_exp_samples,
           other_dtypes_raise=False, tol={"float32": (1e-5, 1e-5)}),
    OpInfo("matrix_exp", lambda m, x: x.matrix_exp(), REAL, _matrix_exp_samples,
           other_dtypes_raise=False, tol={"float32": (1e-5, 1e-5)}),
    OpInfo("linalg.cond", lambda m, *a: m.linalg.cond(*a), REAL,
           lambda dtype, rng: [Sample(_square(rng, dtype), p) for p in (None, 2, -2)] +
           [Sample(_square(rng, dtype, batch=(2,)))],
           other_dtypes_raise=False, tol={"float32": (1e-5, 1e-5)},
           errors=lambda: [ErrorInput(f32(2, 3), 1, match="square")]),
    # torch's backward through the other norms fails (an in-place op on inv's output)
    OpInfo("linalg.cond.norms", lambda m, *a: m.linalg.cond(*a), REAL,
           lambda dtype, rng: [Sample(_square(rng, dtype), p) for p in
                               (1, -1, float("inf"), -float("inf"), "fro", "nuc")] +
           [Sample(T(np.array([[[1., 2.], [2., 4.]], [[2., 0.], [0., 1.]]]), dtype), 1)],
           grad=False, gradcheck=True, other_dtypes_raise=False,
           tol={"float32": (1e-5, 1e-5)}),
    OpInfo("torch.frobenius_norm", lambda m, *a: m.frobenius_norm(*a), FLOATS,
           lambda dtype, rng: [Sample(make(rng, (2, 3, 4), dtype), (0, 2)),
                               Sample(make(rng, (2, 3, 4), dtype), [1], True),
                               Sample(make(rng, (3, 4), dtype), 1)],
           other_dtypes_raise=False, tol={"float16": (5e-3, 5e-3), "bfloat16": (3e-2, 3e-2)},
           errors=lambda: [ErrorInput(f32(2, 3, 4), (0, 1, 2), match="at most 2")]),
    OpInfo("torch.nuclear_norm", lambda m, *a: m.nuclear_norm(*a), REAL,
           lambda dtype, rng: [Sample(make(rng, (3, 4), dtype)),
                               Sample(make(rng, (2, 3, 4), dtype), (0, 1)),
                               Sample(make(rng, (3, 3), dtype), True)],
           other_dtypes_raise=False, tol={"float32": (1e-5, 1e-5)}),
    OpInfo("torch.norm_except_dim", lambda m, *a: m.norm_except_dim(*a), REAL,
           lambda dtype, rng: [Sample(make(rng, (2, 3, 4), dtype), 2, d) for d in (0, 1, 2, -1)]
           + [Sample(make(rng, (3, 4), dtype), 3, 1)],
           other_dtypes_raise=False),
    OpInfo("torch.adjoint", lambda m, x: m.adjoint(x), ALL,
           lambda dtype, rng: [Sample(make(rng, (3, 4), dtype)),
                               Sample(make(rng, (2, 3, 4), dtype, "transposed"))],
           errors=lambda: [ErrorInput(f32(3), match="matrices")]),
    OpInfo("adjoint", lambda m, x: x.adjoint(), ALL,
           lambda dtype, rng: [Sample(make(rng, (3, 4), dtype))]),
    # LU: pivots from LAPACK, factors by differentiable elimination
    OpInfo("linalg.lu", lambda m, A: m.linalg.lu(A), REAL, _lu_samples,
           other_dtypes_raise=False, tol={"float32": (1e-5, 1e-5)},
           errors=lambda: [ErrorInput(f32(3), match="2 or more"),
                           ErrorInput(i64(3, 3), match="not implemented")]),
    OpInfo("linalg.lu_factor", lambda m, A: m.linalg.lu_factor(A), REAL, _lu_samples,
           other_dtypes_raise=False, tol={"float32": (1e-5, 1e-5)}),
    OpInfo("linalg.lu_factor_ex", lambda m, A: m.linalg.lu_factor_ex(A), REAL,
           lambda dtype, rng: _lu_samples(dtype, rng)[:2] + [
               Sample(T(np.array([[1., 2.], [2., 4.]]), dtype))],
           grad=False, other_dtypes_raise=False),
    OpInfo("torch.lu", lambda m, A, *a: m.lu(A, *a), REAL,
           lambda dtype, rng: [Sample(s.args[0]) for s in _lu_samples(dtype, rng)] +
           [Sample(_square(rng, dtype), True, True)],
           other_dtypes_raise=False, tol={"float32": (1e-5, 1e-5)}),
    OpInfo("lu", lambda m, A: A.lu(), REAL, lambda dtype, rng: _lu_samples(dtype, rng)[:1],
           other_dtypes_raise=False, tol={"float32": (1e-5, 1e-5)}),
    OpInfo("torch.lu_unpack", _lu_unpack, REAL, _lu_samples, other_dtypes_raise=False,
           tol={"float32": (1e-5, 1e-5)}),
    OpInfo("linalg.lu_solve", _lu_solve(False), REAL, _lu_solve_samples,
           other_dtypes_raise=False, tol={"float32": (1e-5, 1e-5)}),
    OpInfo("torch.lu_solve", _lu_solve(True), REAL,
           lambda dtype, rng: _lu_solve_samples(dtype, rng)[:1], other_dtypes_raise=False,
           tol={"float32": (1e-5, 1e-5)}),
    # randomized low-rank SVD: the default generator's stream is torch's, so the sketch is the
    # same; compared as S and U diag(S) V^H (singular vectors are unique up to sign)
    OpInfo("torch.svd_lowrank", _lowrank("svd_lowrank"), REAL,
           lambda dtype, rng: [Sample(make(rng, (5, 4), dtype), q=3),
                               Sample(make(rng, (2, 2, 4), dtype), q=2, niter=1),
                               Sample(make(rng, (5, 5), dtype), q=2,
                                      M=make(rng, (5, 5), dtype, grad=False))],
           other_dtypes_raise=False, tol={"float32": (1e-4, 1e-4)}),
    OpInfo("torch.pca_lowrank", _lowrank("pca_lowrank"), REAL,
           lambda dtype, rng: [Sample(make(rng, (5, 4), dtype)),
                               Sample(make(rng, (2, 3, 5), dtype), q=3, center=False)],
           other_dtypes_raise=False, tol={"float32": (1e-4, 1e-4)},
           errors=lambda: [ErrorInput(f32(3, 4), q=5, match="q"),
                           ErrorInput(f32(3, 4), niter=-1, match="niter")]),
    # Householder reflectors: geqrf by LAPACK (no derivative in torch either: inputs without
    # grad), their products by differentiable ops
    OpInfo("torch.geqrf", lambda m, A: m.geqrf(A), REAL,
           lambda dtype, rng: [Sample(make(rng, s, dtype, grad=False))
                               for s in ((4, 3), (3, 3), (3, 5), (2, 3, 2))],
           grad=False, other_dtypes_raise=False,
           errors=lambda: [ErrorInput(i64(3, 3), match="not implemented")]),
    OpInfo("geqrf", lambda m, A: A.geqrf(), REAL,
           lambda dtype, rng: [Sample(make(rng, (4, 3), dtype, grad=False))],
           grad=False, other_dtypes_raise=False),
    OpInfo("linalg.householder_product", lambda m, A, tau: m.linalg.householder_product(A, tau),
           REAL, _reflector_samples, other_dtypes_raise=False, tol={"float32": (1e-5, 1e-5)},
           errors=lambda: [ErrorInput(f32(2, 3), f32(2), match="shape"),
                           ErrorInput(f32(3, 2), f32(3), match="tau")]),
    OpInfo("torch.orgqr", lambda m, A, tau: m.orgqr(A, tau), REAL, _reflector_samples,
           other_dtypes_raise=False, tol={"float32": (1e-5, 1e-5)}),
    OpInfo("orgqr", lambda m, A, tau: A.orgqr(tau), REAL,
           lambda dtype, rng: _reflector_samples(dtype, rng)[:1], other_dtypes_raise=False,
           tol={"float32": (1e-5, 1e-5)}),
    OpInfo("torch.ormqr", lambda m, *a: m.ormqr(*a), REAL, _ormqr_samples,
           other_dtypes_raise=False, tol={"float32": (1e-5, 1e-5)}),
    OpInfo("ormqr", lambda m, A, *a: A.ormqr(*a), REAL,
           lambda dtype, rng: _ormqr_samples(dtype, rng)[:1], other_dtypes_raise=False,
           tol={"float32": (1e-5, 1e-5)}),
    # general eigen-decomposition, complex results (values only: no derivative in ember)
    # (compared as view_as_real: the table's tolerances are per real dtype)
    OpInfo("linalg.eig", _eig_fixed_phase, REAL,
           _eig_samples, grad=False, other_dtypes_raise=False, tol={"float32": (1e-5, 1e-5)},
           errors=lambda: [ErrorInput(f32(2, 3), match="square")]),
    OpInfo("linalg.eig.dtype", lambda m, A: [str(r.dtype) for r in m.linalg.eig(A)], REAL,
           lambda dtype, rng: _eig_samples(dtype, rng)[:1], grad=False,
           other_dtypes_raise=False),
    OpInfo("linalg.eigvals", lambda m, A: m.view_as_real(m.linalg.eigvals(A)), REAL,
           _eig_samples, grad=False, other_dtypes_raise=False, tol={"float32": (1e-5, 1e-5)}),
    OpInfo("torch.view_as_real_copy", lambda m, x: m.view_as_real_copy(
        m.view_as_complex(x.detach())), REAL,
        lambda dtype, rng: [Sample(make(rng, (3, 2), dtype))], grad=False,
        other_dtypes_raise=False),
    OpInfo("torch.view_as_complex_copy", lambda m, x: m.view_as_complex_copy(x.detach()), REAL,
           lambda dtype, rng: [Sample(make(rng, (3, 2), dtype))], grad=False,
           other_dtypes_raise=False),
    # factories: uninitialized memory, so the strides (and frombuffer's shared values)
    OpInfo("torch.frombuffer", _frombuffer, ("int16", "int32", "float32", "float64"),
           lambda dtype, rng: [Sample(DT(dtype)), Sample(DT(dtype), count=1, offset=8)],
           grad=False, other_dtypes_raise=False,
           errors=lambda: [ErrorInput(DT("int64"), count=9, match="buffer length"),
                           ErrorInput(DT("int64"), offset=64, match="offset")]),
    OpInfo("torch.empty_permuted", lambda m, dt, order: m.tensor(list(m.empty_permuted(
        (2, 3, 4), order, dtype=dt).stride())), ALL,
        lambda dtype, rng: [Sample(DT(dtype), o) for o in ((0, 1, 2), (2, 0, 1), (1, 2, 0))],
        grad=False, other_dtypes_raise=False),
    OpInfo("new_empty_strided", lambda m, x: m.tensor(list(x.new_empty_strided(
        (2, 3), (1, 2)).stride()) + [str(x.new_empty_strided((2,), (1,)).dtype) == str(
            x.dtype)]), ALL, lambda dtype, rng: [Sample(make(rng, (3,), dtype))], grad=False),
    # factories that read a tensor: what they make (the random ones: shape, dtype and range)
    OpInfo("torch.empty_like", lambda m, x: m.tensor(
        list(m.empty_like(x).shape) + list(m.empty_like(x.t()).stride()) +
        [str(m.empty_like(x, dtype=m.int16).dtype) == "torch.int16"]), ALL,
        lambda dtype, rng: [Sample(make(rng, (2, 3), dtype))], grad=False),
    OpInfo("torch.rand_like", lambda m, x: m.tensor(
        list(m.rand_like(x).shape) + [str(m.rand_like(x).dtype) == str(x.dtype),
                                      bool(((m.rand_like(x) >= 0) & (m.rand_like(x) < 1)).all())]),
        FLOATS, lambda dtype, rng: [Sample(make(rng, (2, 3), dtype))], grad=False,
        other_dtypes_raise=False),
    OpInfo("torch.randn_like", lambda m, x: m.tensor(
        list(m.randn_like(x).shape) + [str(m.randn_like(x).dtype) == str(x.dtype)]), FLOATS,
        lambda dtype, rng: [Sample(make(rng, (2, 3), dtype))], grad=False,
        other_dtypes_raise=False),
    OpInfo("torch.randint_like", lambda m, x, *bounds: m.tensor(
        list(m.randint_like(x, *bounds).shape) +
        [bool(((m.randint_like(x, *bounds) >= bounds[0] if len(bounds) == 2 else True) &
               (m.randint_like(x, *bounds) < bounds[-1])).all())]), ALL[1:],
        lambda dtype, rng: [Sample(make(rng, (2, 3), dtype), 5), Sample(make(rng, (4,), dtype), 2, 5)],
        grad=False, other_dtypes_raise=False),
    OpInfo("new_zeros", lambda m, x: x.new_zeros(2, 3), ALL,
           lambda dtype, rng: [Sample(make(rng, (3,), dtype))], grad=False),
    OpInfo("new_ones", lambda m, x: x.new_ones((2,), dtype=m.float64), ALL,
           lambda dtype, rng: [Sample(make(rng, (3,), dtype))], grad=False),
    OpInfo("new_full", lambda m, x: x.new_full((2, 2), 3), ALL,
           lambda dtype, rng: [Sample(make(rng, (3,), dtype))], grad=False),
    OpInfo("new_empty", lambda m, x: m.tensor(list(x.new_empty(2, 3).shape) + [
        str(x.new_empty(()).dtype) == str(x.dtype)]), ALL,
        lambda dtype, rng: [Sample(make(rng, (3,), dtype))], grad=False),
    # the metadata queries as ops (what a "strides"-policy subclass's handler is asked)
    OpInfo("torch.ops.aten.is_contiguous", lambda m, x: m.tensor([
        m.ops.aten.is_contiguous.default(x), m.ops.aten.is_contiguous.default(x.transpose(0, 1)),
        m.ops.aten.is_contiguous.memory_format(x, m.channels_last),
        m.ops.aten.is_strides_like_format.default(x, m.channels_last),
        m.ops.aten.is_strides_like_format.default(x, m.contiguous_format),
        m.ops.aten.is_non_overlapping_and_dense.default(x[:, :1])]
        + m.ops.aten.stride.default(x) + m.ops.aten.sym_stride.default(x.transpose(0, 1))),
        ALL, lambda dtype, rng: [Sample(make(rng, (2, 3, 4, 5), dtype)),
                                 Sample(make(rng, (2, 3, 4, 5), dtype, "transposed"))],
        grad=False),
    # forward AD's tangent layout: zeros laid out as `other` (a "sliced" other has gaps) behind
    # self's batch dims; compared as sizes, strides, storage offset and storage size
    OpInfo("_new_zeros_with_same_feature_meta", lambda m, x, y, n: m.tensor(
        [list(r.shape) + list(r.stride()) + [r.storage_offset(), r.untyped_storage().nbytes()
                                             // r.element_size(), int(r.sum())]
         for r in [m.ops.aten._new_zeros_with_same_feature_meta(
             x, y, self_num_batch_dims=min(n, x.dim()))]]),   # more than x has: torch reads garbage
        ALL, lambda dtype, rng: [Sample(make(rng, (2, 3, 4), dtype),
                                        make(rng, (3, 4), dtype, "sliced"), n) for n in (0, 2)],
        grad=False),
    # PyTorch's ops for its autograd tests: copies (and a view) whose backward the tests
    # recognize -- fullcoverage's is a deliberately wrong grad + 1 (so no gradcheck), and
    # _test_warn_in_autograd warns from its backward
    OpInfo("torch._test_autograd_multiple_dispatch",
           lambda m, x: m._test_autograd_multiple_dispatch(x), REAL,
           lambda dtype, rng: [Sample(make(rng, (2, 3), dtype))], gradcheck=False,
           other_dtypes_raise=False),
    *(OpInfo(f"torch.{name}", lambda m, x, _n=name: getattr(m, _n)(x), REAL,
             lambda dtype, rng: [Sample(make(rng, (2, 3), dtype))], other_dtypes_raise=False)
      for name in ("_test_autograd_multiple_dispatch_view",
                   "_test_autograd_multiple_dispatch_view_copy")),
    OpInfo("_C._nn._test_warn_in_autograd", lambda m, x: m._C._nn._test_warn_in_autograd(x),
           REAL, lambda dtype, rng: [Sample(make(rng, (2, 3), dtype))], other_dtypes_raise=False),
    # random samplers: means of 4000 draws (several standard errors of tolerance)
    OpInfo("torch.binomial", _mean_of_draws("binomial"), REAL,
           lambda dtype, rng: [Sample(T(np.array([0., 1., 10., 40.]), dtype, grad=False),
                                      T(np.array([0.5, 0.3, 0.3, 0.9]), dtype, grad=False))],
           grad=False, other_dtypes_raise=False, tol={d: (0, 0.15) for d in REAL}),
    OpInfo("torch._standard_gamma", _mean_of_draws("_standard_gamma"), REAL,
           lambda dtype, rng: [Sample(T(np.array([0.5, 1., 3.]), dtype, grad=False))],
           grad=False, other_dtypes_raise=False, tol={d: (0, 0.15) for d in REAL}),
    OpInfo("torch._sample_dirichlet", _mean_of_draws("_sample_dirichlet"), REAL,
           lambda dtype, rng: [Sample(T(np.array([0.5, 1., 3.]), dtype, grad=False))],
           grad=False, other_dtypes_raise=False, tol={d: (0, 0.03) for d in REAL}),
    # removed in PyTorch 1.9: both raise
    *(OpInfo(f"torch.{name}", lambda m, *a, _n=name: getattr(m, _n)(*a), REAL,
             lambda dtype, rng: [], grad=False, other_dtypes_raise=False,
             errors=lambda: [ErrorInput(f32(2, 2), f32(2, 2), match="removed")])
      for name in ("solve", "lstsq", "eig", "symeig", "matrix_rank")),
]
