"""The op test table's rows for the linalg functions of issue 13: the `_ex` variants (info
instead of an error), LDL, tensorinv/tensorsolve, vander, and the gradients of eig/eigvals, qr
in every mode, lstsq with every driver and matrix_exp -- on the inputs PyTorch's own OpInfos use
(torch/testing/_internal/opinfo/definitions/linalg.py: full-rank matrices with distinct
singular values, Hermitian positive-definite ones, batches (), (0,), (2,), (1, 1), sizes 5 and 0;
matrix_exp on make_tensor's uniform [-9, 9] entries).

Same conventions as op_db.py, which appends these rows to its OPS.
"""
import numpy as np

from op_db import INTS, ErrorInput, OpInfo, Sample, T, f32, f64, i64, make, round_to

REAL = ("float32", "float64")
_TOL = {"float32": (1e-4, 1e-4)}
BATCHES = ((), (0,), (2,), (1, 1))


def fullrank(rng, shape, dtype, grad=True):
    """U diag(s) V^T with orthogonal U, V and distinct singular values in [1, 2] (PyTorch's
    make_fullrank_matrices_with_distinct_singular_values)."""
    *batch, m, n = shape
    k = min(m, n)
    u = np.linalg.qr(rng.standard_normal(tuple(batch) + (m, m)))[0]
    v = np.linalg.qr(rng.standard_normal(tuple(batch) + (n, n)))[0]
    s = np.zeros(tuple(batch) + (m, n))
    idx = np.arange(k)
    s[..., idx, idx] = np.linspace(1, 2, k) if k else 0
    return T(round_to(u @ s @ v, dtype), dtype, grad=grad)


def hermitian_pd(rng, shape, dtype, grad=True):
    a = rng.standard_normal(shape)
    n = shape[-1]
    return T(round_to(a @ np.swapaxes(a, -1, -2) + n * np.eye(n), dtype), dtype, grad=grad)


def _symmetric_indefinite(rng, n, dtype, grad=False):
    """A symmetric matrix with a zero-ish diagonal: Bunch-Kaufman takes 2x2 pivots."""
    a = rng.standard_normal((n, n))
    a = a + a.T
    np.fill_diagonal(a, 0.01)
    return T(round_to(a, dtype), dtype, grad=grad)


def _invertible_samples(dtype, rng):
    out = [Sample(fullrank(rng, (3, 3), dtype))]
    out += [Sample(fullrank(rng, b + (n, n), dtype)) for b in BATCHES for n in (5, 0)]
    return out


def _singular(dtype):
    return T(np.array([[[1., 2.], [2., 4.]], [[2., 0.], [0., 1.]], [[0., 0.], [0., 0.]]],
                      dtype=dtype), dtype, grad=False)


def _solve_samples(dtype, rng):
    out = [Sample(fullrank(rng, (3, 3), dtype), make(rng, (3, 2), dtype))]
    for batch in ((), (0,), (2,), (2, 2)):
        for n in (5, 0):
            A = fullrank(rng, batch + (n, n), dtype)
            for nrhs in ((), (1,), (3,)):
                out.append(Sample(A, make(rng, batch + (n,) + nrhs, dtype)))
    out += [Sample(fullrank(rng, (2, 4, 4), dtype), make(rng, (4, 3), dtype)),
            Sample(fullrank(rng, (3, 3), dtype), make(rng, (2, 2, 3), dtype), left=False)]
    return out


def _cholesky_samples(dtype, rng):
    out = [Sample(hermitian_pd(rng, (3, 3), dtype))]
    for batch in BATCHES:
        for n in (5, 0):
            for upper in (False, True):
                out.append(Sample(hermitian_pd(rng, batch + (n, n), dtype), upper=upper))
    return out


def _sym(A):
    """(A + A^T) / 2 for a square floating A (an error input is passed on as it is)."""
    square = A.dim() >= 2 and A.shape[-1] == A.shape[-2] and A.is_floating_point()
    return (A + A.mT) / 2 if square else A


def _not_pd(dtype):
    return T(np.array([[[1., 2.], [2., 1.]], [[1., 0.], [0., 1.]], [[-1., 0.], [0., 2.]]],
                      dtype=dtype), dtype, grad=False)


def _ldl_factor_samples(dtype, rng):
    return [Sample(hermitian_pd(rng, (5, 5), dtype, grad=False), hermitian=False),
            Sample(hermitian_pd(rng, (2, 5, 5), dtype, grad=False), hermitian=False),
            Sample(T(np.zeros((0, 0), dtype), dtype, grad=False), hermitian=False),
            Sample(T(np.zeros((0, 2, 2), dtype), dtype, grad=False), hermitian=False),
            Sample(_symmetric_indefinite(rng, 5, dtype)),
            Sample(_symmetric_indefinite(rng, 4, dtype), hermitian=True)]


def _ldl_solve(m, A, B, **kw):
    LD, pivots = m.linalg.ldl_factor(A, **kw)
    return m.linalg.ldl_solve(LD, pivots, B, **kw)


def _ldl_solve_samples(dtype, rng):
    out = []
    for A in (hermitian_pd(rng, (5, 5), dtype, grad=False),
              hermitian_pd(rng, (2, 5, 5), dtype, grad=False), _symmetric_indefinite(rng, 5, dtype),
              T(np.zeros((0, 0), dtype), dtype, grad=False),
              T(np.zeros((0, 2, 2), dtype), dtype, grad=False)):
        for batch in ((), A.data.shape[:-2]):
            out.append(Sample(A, make(rng, batch + (A.data.shape[-1], 5), dtype),
                              hermitian=False))
    return out


def _eig_fixed_phase(m, A):
    """Eigenvalues, and eigenvectors scaled to make their largest entry real and positive: a
    loss of these does not depend on the eigenvectors' arbitrary phase, so it has a gradient."""
    values, vectors = m.linalg.eig(A)
    top = vectors.gather(-2, vectors.abs().argmax(-2, keepdim=True))
    return m.view_as_real(values), m.view_as_real(vectors * (top.abs() / top))


def _eig_samples(dtype, rng):
    rot = T(np.array([[1., -2.], [1., 0.5]]), dtype)                  # complex eigenvalues
    return [Sample(fullrank(rng, (3, 3), dtype)), Sample(rot)] + \
        [Sample(fullrank(rng, b + (n, n), dtype)) for b in ((), (2,), (1, 1)) for n in (5,)]


def _qr_samples(mode):
    def samples(dtype, rng):
        out = [Sample(fullrank(rng, (2, 3) if mode == "complete" else (3, 2), dtype), mode),
               Sample(fullrank(rng, (3, 3), dtype), mode)]
        for batch in BATCHES:
            for m_ in (5, 2, 0):
                for n in (5, 2, 0):
                    if mode == "complete" and m_ > n:
                        continue        # not differentiable (the error row checks it)
                    out.append(Sample(fullrank(rng, batch + (m_, n), dtype), mode))
        return out
    return samples


def _lstsq_samples(dtype, rng):
    """PyTorch's: well-conditioned (3 + delta, 3) matrices, every CPU driver."""
    out = []
    for batch in ((), (3,), (3, 3)):
        for driver in ("gels", "gelsy", "gelss", "gelsd"):
            for delta in (-1, 0, 1):
                shape = batch + (3 + delta, 3)
                out.append(Sample(fullrank(rng, shape, dtype), make(rng, shape, dtype),
                                  driver=driver))
    return out


def _matrix_exp_samples(dtype, rng):
    """PyTorch's (make_tensor: uniform in [-9, 9]) after two small ones for gradcheck."""
    return [Sample(make(rng, (2, 2), dtype, low=-1, high=1)),
            Sample(make(rng, (3, 3), dtype, low=-2, high=2)),
            Sample(make(rng, (5, 5), dtype, low=-9, high=9)),
            Sample(make(rng, (5, 5, 5), dtype, low=-9, high=9)),
            Sample(make(rng, (0, 0), dtype)), Sample(make(rng, (2, 0, 0), dtype)),
            Sample(make(rng, (4, 4), dtype, "transposed", low=-3, high=3))]


def _vander_samples(dtype, rng):
    out = []
    for shape in ((), (1,), (5,), (2, 5)):
        if shape and shape[-1] > 1:
            out.append(Sample(make(rng, shape, dtype, low=-2, high=2)))
        n = shape[-1] if shape else 1
        for N in (n - 1, n, n + 1):
            if N >= 2:
                out.append(Sample(make(rng, shape, dtype, low=-2, high=2), N=N))
    return out


def _tensorsolve_samples(dtype, rng):
    """PyTorch's shapes and dims; A is a full-rank matrix reshaped (so the system is solvable)."""
    out = []
    for shape in ((2, 2, 4), (2, 3, 6), (3, 4, 4, 3)):
        n = int(np.prod(shape[:2]))
        for dims in (None, (0, 2)):
            a = fullrank(rng, (n, n), dtype).data.reshape(shape)
            out.append(Sample(T(a, dtype), make(rng, shape[:2], dtype), dims=dims))
    return out


def _tensorinv_samples(dtype, rng):
    out = []
    for lhs, rhs in (((2, 2), (4,)), ((2, 2, 3), (12, 1)), ((4, 3), (6, 1, 2))):
        n = int(np.prod(lhs))
        out.append(Sample(T(fullrank(rng, (n, n), dtype).data.reshape(lhs + rhs), dtype),
                          ind=len(lhs)))
    return out


def _scaled_mm_samples(dtype, rng):
    """float32 data the op turns into float8_e4m3fn operands; tensor-wise and row-wise scales."""
    a, b = make(rng, (3, 4), dtype, grad=False), make(rng, (4, 2), dtype, grad=False)
    return [Sample(a, b, T(np.array(0.5, np.float32), dtype, grad=False),
                   T(np.array(2.0, np.float32), dtype, grad=False)),
            Sample(a, b, make(rng, (3, 1), dtype, grad=False), make(rng, (1, 2), dtype, grad=False),
                   bias=make(rng, (2,), dtype, grad=False))]


LINALG_OPS = [
    OpInfo("_scaled_mm", lambda m, a, b, sa, sb, **kw: m._scaled_mm(
        a.to(m.float8_e4m3fn), b.to(m.float8_e4m3fn), sa, sb, out_dtype=m.float32, **kw),
        ("float32",), _scaled_mm_samples, grad=False, other_dtypes_raise=False,
        errors=lambda: [ErrorInput(f32(3, 4), f32(4, 2), f32(2, 1), f32(1, 2), match="scaling")]),
    OpInfo("linalg.inv_ex", lambda m, A, **kw: m.linalg.inv_ex(A, **kw), REAL,
           _invertible_samples, tol=_TOL,
           errors=lambda: [ErrorInput(f32(2, 3), match="square"),
                           ErrorInput(i64(3, 3), match="floating point"),
                           ErrorInput(_singular("float32"), check_errors=True,
                                      match=r"\(Batch element 0\): The diagonal element 2")]),
    # a singular matrix: info names the zero pivot; the inverse holds LAPACK's infinities
    OpInfo("linalg.inv_ex.info", lambda m, A: m.linalg.inv_ex(A).info, REAL,
           lambda dtype, rng: [Sample(_singular(dtype)), Sample(T(_singular(dtype).data[0],
                                                                  dtype, grad=False))],
           grad=False, other_dtypes_raise=False),
    OpInfo("linalg.solve_ex", lambda m, A, B, **kw: m.linalg.solve_ex(A, B, **kw), REAL,
           _solve_samples, tol=_TOL,
           errors=lambda: [ErrorInput(f32(2, 3), f32(2), match="square"),
                           ErrorInput(f32(3, 3), f32(2, 2), match="Incompatible"),
                           ErrorInput(f32(4, 4), f32(4), left=False, match="4x4 and 4x1"),
                           ErrorInput(f32(3, 3), f64(3, 2), match="dtype"),
                           ErrorInput(_singular("float32"), f32(3, 2, 1), check_errors=True,
                                      match="singular")]),
    OpInfo("linalg.solve_ex.info", lambda m, A, B: m.linalg.solve_ex(A, B).info, REAL,
           lambda dtype, rng: [Sample(_singular(dtype), make(rng, (3, 2, 1), dtype))],
           grad=False, other_dtypes_raise=False),
    # symmetrised inside, so that gradcheck's one-entry perturbations stay in the domain
    OpInfo("linalg.cholesky_ex", lambda m, A, **kw: m.linalg.cholesky_ex(_sym(A), **kw), REAL,
           _cholesky_samples, tol=_TOL, other_dtypes_raise=False,
           errors=lambda: [ErrorInput(f32(2, 3), match="square"),
                           ErrorInput(i64(3, 3), match="floating point"),
                           ErrorInput(_not_pd("float32"), check_errors=True,
                                      match=r"\(Batch element 0\).*order 2")]),
    # not positive-definite: info is the order of the failing minor, L LAPACK's partial factor
    OpInfo("linalg.cholesky_ex.info", lambda m, A, **kw: m.linalg.cholesky_ex(A, **kw), REAL,
           lambda dtype, rng: [Sample(_not_pd(dtype)), Sample(_not_pd(dtype), upper=True)],
           grad=False, other_dtypes_raise=False),
    OpInfo("linalg.ldl_factor_ex", lambda m, A, **kw: m.linalg.ldl_factor_ex(A, **kw), REAL,
           _ldl_factor_samples, grad=False, tol=_TOL,
           errors=lambda: [ErrorInput(f32(2, 3), match="square"),
                           ErrorInput(i64(3, 3), match="floating point")]),
    OpInfo("linalg.ldl_factor_ex.info", lambda m, A: m.linalg.ldl_factor_ex(A).info, REAL,
           lambda dtype, rng: [Sample(T(np.zeros((2, 3, 3), dtype), dtype))],
           grad=False, other_dtypes_raise=False),
    # no derivative in PyTorch: backward raises in both
    OpInfo("linalg.ldl_factor", lambda m, A, **kw: m.linalg.ldl_factor(A, **kw), REAL,
           lambda dtype, rng: _ldl_factor_samples(dtype, rng) + [
               Sample(hermitian_pd(rng, (3, 3), dtype))],
           gradcheck=False, tol=_TOL, other_dtypes_raise=False,
           errors=lambda: [ErrorInput(T(np.zeros((2, 2), "float32"), "float32"))]),
    OpInfo("linalg.ldl_solve", _ldl_solve, REAL, _ldl_solve_samples, gradcheck=False, tol=_TOL,
           errors=lambda: [ErrorInput(T(np.eye(2, dtype="float32"), "float32"), f32(3, 1),
                                      match="Incompatible")]),
    OpInfo("linalg.tensorinv", lambda m, A, **kw: m.linalg.tensorinv(A, **kw), REAL,
           _tensorinv_samples, tol=_TOL, other_dtypes_raise=False,
           errors=lambda: [ErrorInput(f32(2, 2, 4), ind=0, match="strictly positive"),
                           ErrorInput(f32(2, 2, 4), ind=1, match="prod"),
                           ErrorInput(T(np.zeros((2, 2), "float32"), "float32"), ind=1,
                                      match="singular")]),
    OpInfo("linalg.tensorsolve", lambda m, A, B, **kw: m.linalg.tensorsolve(A, B, **kw), REAL,
           _tensorsolve_samples, tol=_TOL, other_dtypes_raise=False,
           errors=lambda: [ErrorInput(f32(2, 2, 4), f32(3), match="prod")]),
    OpInfo("linalg.vander", lambda m, x, **kw: m.linalg.vander(x, **kw), INTS + REAL,
           _vander_samples, tol=_TOL, other_dtypes_raise=False,
           errors=lambda: [ErrorInput(f32(3), N=1, match="greater than 1"),
                           ErrorInput(f32(), match="greater than 1")]),
    # gradients of the general eigen-decomposition (complex), of a phase-free loss
    OpInfo("linalg.eig.grad", _eig_fixed_phase, REAL, _eig_samples, tol=_TOL),
    OpInfo("linalg.eig.abs", lambda m, A: (m.view_as_real(m.linalg.eig(A)[0]),
                                           m.linalg.eig(A)[1].abs()),
           REAL, _eig_samples, tol=_TOL, other_dtypes_raise=False),
    OpInfo("linalg.eigvals.grad", lambda m, A: m.view_as_real(m.linalg.eigvals(A)), REAL,
           _eig_samples, tol=_TOL, other_dtypes_raise=False),
    OpInfo("linalg.qr.reduced", lambda m, A, mode: m.linalg.qr(A, mode), REAL,
           _qr_samples("reduced"), tol=_TOL, other_dtypes_raise=False),
    OpInfo("linalg.qr.complete", lambda m, A, mode: m.linalg.qr(A, mode), REAL,
           _qr_samples("complete"), tol=_TOL, other_dtypes_raise=False),
    # mode='r' computes no Q, and complete with m > n is not differentiable: backward raises
    OpInfo("linalg.qr.undifferentiable", lambda m, A, mode: m.linalg.qr(A, mode)[1], REAL,
           lambda dtype, rng: [Sample(fullrank(rng, (3, 2), dtype), "r"),
                               Sample(fullrank(rng, (2, 3), dtype), "r")],
           gradcheck=False, tol=_TOL, other_dtypes_raise=False),
    OpInfo("linalg.qr.complete_tall", lambda m, A: m.linalg.qr(A, "complete")[1], REAL,
           lambda dtype, rng: [Sample(fullrank(rng, (3, 2), dtype))], gradcheck=False,
           tol=_TOL, other_dtypes_raise=False),
    OpInfo("linalg.lstsq.drivers", lambda m, A, B, **kw: m.linalg.lstsq(A, B, **kw), REAL,
           _lstsq_samples, tol={"float32": (1e-3, 1e-3)}, gradcheck=False,
           other_dtypes_raise=False),
    # gradcheck on the differentiable outputs (the others may be empty)
    OpInfo("linalg.lstsq.differentiable", lambda m, A, B, **kw: m.linalg.lstsq(A, B, **kw)[:2]
           if kw.get("driver") != "gelsy" else m.linalg.lstsq(A, B, **kw)[0], ("float64",),
           lambda dtype, rng: [s for s in _lstsq_samples(dtype, rng)
                               if s.args[0].data.shape[-2] == 4][:4],
           other_dtypes_raise=False),
    OpInfo("_compute_linear_combination", lambda m, x, c: m._compute_linear_combination(x, c),
           INTS + REAL, lambda dtype, rng: [
               Sample(make(rng, (3, 2, 2), dtype), make(rng, (4, 3), dtype)),
               Sample(make(rng, (3, 5), dtype), make(rng, (2, 2), dtype)),
               Sample(make(rng, (1,), dtype), make(rng, (2, 1), dtype))],
           grad=False, other_dtypes_raise=False,
           errors=lambda: [ErrorInput(f32(), f32(2, 2), match="Empty tensor")]),
    OpInfo("linalg.matrix_exp.torch_samples", lambda m, A: m.linalg.matrix_exp(A), REAL,
           # entries up to ~1e4: torch's float32 result is itself ~3e-3 from the exact one
           # (ember's, computed in float64 and rounded, ~2e-4)
           _matrix_exp_samples, tol={"float32": (1e-3, 1e-2)}, other_dtypes_raise=False,
           errors=lambda: [ErrorInput(i64(2, 2), match="floating point"),
                           ErrorInput(f32(2, 3), match="square")]),
]
