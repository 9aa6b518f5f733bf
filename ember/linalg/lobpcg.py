"""torch.lobpcg: the k largest (or smallest) eigenpairs of a symmetric positive definite
generalized problem A X = B X E by LOBPCG (Knyazev 2001), with PyTorch's two update schemes:
"ortho" (the default: B-orthonormal search bases, Duersch et al. 2018) and "basic".

Each step searches the span of the current approximations X, the previous step's direction P and
the (preconditioned) residuals W = iK (A X - B X E) by Rayleigh-Ritz, and stops when the first k
pairs are converged by the backward-stable criterion |R| / (|X| (|A| + |E| |B|)) < tol. A and B
may be dense or sparse COO; the work is matrix products with them and small dense eigh, Cholesky
and QR problems, all ember ops.

Note [lobpcg's gradient]
PyTorch differentiates the result for a dense A (not B, not a sparse A) through the eigenpairs
of the symmetrized A. Eigenvalue and eigenvector gradients of the k returned pairs are those of
the same pairs taken from the complete decomposition, so with grad enabled the pairs found by
the iteration are matched to `linalg.eigh` of (A + A^T) / 2 (same order, same signs) and those
differentiable pairs are returned.
"""
from .._core import dtype as D
from .._core.tensor import Tensor
from .. import _refs as E
from .. import linalg
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled, no_grad

__all__ = ["lobpcg"]


# ---- the small dense helpers (PyTorch's torch._linalg_utils, served from here) -------------
def is_sparse(A):
    """True for a sparse COO tensor (the other sparse layouts are not)."""
    if not isinstance(A, Tensor):
        raise TypeError(f"expected Tensor but got {type(A)}")
    return A.is_sparse


def get_floating_dtype(A):
    """A's dtype if it is a real floating dtype; float32 for every other."""
    return A.dtype if A.dtype in (D.float16, D.float32, D.float64) else D.float32


def matmul(A, B):
    """A @ B, where A may be None (the identity) or sparse COO; B is dense."""
    if A is None:
        return B
    return A.mm(B) if is_sparse(A) else A.matmul(B)


def bform(X, A, Y):
    """The bilinear form X^T A Y."""
    return matmul(X.mT, matmul(A, Y))


def qform(A, S):
    """The quadratic form S^T A S."""
    return bform(S, A, S)


def basis(A):
    """An orthonormal basis of A's columns."""
    return linalg.qr(A).Q


def symeig(A, largest=False):
    """The eigenpairs of the symmetric A (its upper triangle read), ascending or, with
    `largest`, descending."""
    values, vectors = linalg.eigh(A, UPLO="U")
    if largest:
        return values.flip(-1), vectors.flip(-1)
    return values, vectors


# ---- the iteration --------------------------------------------------------------------------
class LOBPCG:
    """Worker of one (unbatched) problem: run() iterates until k pairs converge or niter
    steps are done; E[:k] and X[:, :k] are the result."""

    def __init__(self, A, B, X, iK, iparams, fparams, bparams, method, tracker):
        self.A, self.B, self.iK = A, B, iK
        self.iparams, self.fparams, self.bparams = iparams, fparams, bparams
        self.method, self.tracker = method, tracker
        m, n = iparams["m"], iparams["n"]
        self.X = X
        self.E = E.zeros((n,), dtype=X.dtype)
        self.R = E.zeros((m, n), dtype=X.dtype)
        self.S = E.zeros((m, 3 * n), dtype=X.dtype)
        self.tvars, self.ivars, self.fvars, self.bvars = {}, {"istep": 0}, {"_": 0.0}, {}

    def update(self):
        if self.ivars["istep"] == 0:
            x_norm = float(E.norm(self.X))
            self.fvars["X_norm"] = x_norm
            self.fvars["A_norm"] = float(E.norm(matmul(self.A, self.X))) / x_norm
            self.fvars["B_norm"] = float(E.norm(matmul(self.B, self.X))) / x_norm
            self.ivars["iterations_left"] = self.iparams["niter"]
            self.ivars["converged_count"] = 0
            self.ivars["converged_end"] = 0
        if self.method == "ortho":
            self._update_ortho()
        else:
            self._update_basic()
        self.ivars["iterations_left"] -= 1
        self.ivars["istep"] += 1

    def update_residual(self):
        self.R = matmul(self.A, self.X) - matmul(self.B, self.X) * self.E

    def update_converged_count(self):
        """How many leading pairs meet the backward-stable criterion (Duersch et al. 4.3)."""
        tol, a_norm, b_norm = self.fparams["tol"], self.fvars["A_norm"], self.fvars["B_norm"]
        rerr = E.norm(self.R, 2, (0,)) / (
            E.norm(self.X, 2, (0,)) * (a_norm + E.abs(self.E[:self.X.shape[-1]]) * b_norm))
        count = 0
        for converged in (rerr < tol).tolist():
            if not converged:
                break
            count += 1
        if count < self.ivars["converged_count"]:
            raise AssertionError(f"the number of converged eigenpairs (was "
                                 f"{self.ivars['converged_count']}, got {count}) cannot decrease")
        self.ivars["converged_count"] = count
        self.tvars["rerr"] = rerr
        return count

    def stop_iteration(self):
        return (self.bvars.get("force_stop", False) or self.ivars["iterations_left"] == 0 or
                self.ivars["converged_count"] >= self.iparams["k"])

    def run(self):
        self.update()
        if self.tracker is not None:
            self.call_tracker()
        while not self.stop_iteration():
            self.update()
            if self.tracker is not None:
                self.call_tracker()

    def call_tracker(self):
        self.tracker(self)

    def _update_basic(self):
        ns, nc = self.ivars["converged_end"], self.ivars["converged_count"]
        n, largest = self.iparams["n"], self.bparams["largest"]
        if self.ivars["istep"] == 0:
            Ri = self._get_rayleigh_ritz_transform(self.X)
            values, Z = symeig(qform(qform(self.A, self.X), Ri), largest)
            self.X = self.X.matmul(Ri.matmul(Z))
            self.E = values.clone()
            np_ = 0
            self.update_residual()
            nc = self.update_converged_count()
            self.S[:, :n] = self.X
            W = matmul(self.iK, self.R)
        else:
            S_ = self.S[:, nc:ns]
            Ri = self._get_rayleigh_ritz_transform(S_)
            values, Z = symeig(qform(qform(self.A, S_), Ri), largest)
            self.X[:, nc:] = S_.matmul(Ri.matmul(Z[:, :n - nc]))
            self.E[nc:] = values[:n - nc]
            P = S_.matmul(Ri.matmul(Z[:, n:2 * n - nc]))
            np_ = P.shape[-1]
            self.update_residual()
            nc = self.update_converged_count()
            self.S[:, :n] = self.X
            self.S[:, n:n + np_] = P
            W = matmul(self.iK, self.R[:, nc:])
        ns = self.ivars["converged_end"] = n + np_ + W.shape[-1]
        self.S[:, n + np_:ns] = W

    def _update_ortho(self):
        ns, nc = self.ivars["converged_end"], self.ivars["converged_count"]
        n, largest = self.iparams["n"], self.bparams["largest"]
        if self.ivars["istep"] == 0:
            Ri = self._get_rayleigh_ritz_transform(self.X)
            _, Z = symeig(qform(qform(self.A, self.X), Ri), largest)
            self.X = self.X.matmul(Ri.matmul(Z))
            self.update_residual()
            np_ = 0
            nc = self.update_converged_count()
            self.S[:, :n] = self.X
            W = self._get_ortho(self.R, self.X)
        else:
            S_ = self.S[:, nc:ns]
            values, Z = symeig(qform(self.A, S_), largest)
            self.X[:, nc:] = S_.matmul(Z[:, :n - nc])
            self.E[nc:] = values[:n - nc]
            P = S_.matmul(Z[:, n - nc:].matmul(linalg.qr(Z[:n - nc, n - nc:].mT).Q))
            np_ = P.shape[-1]
            self.update_residual()
            nc = self.update_converged_count()
            self.S[:, :n] = self.X
            self.S[:, n:n + np_] = P
            W = self._get_ortho(self.R[:, nc:], self.S[:, :n + np_])
        ns = self.ivars["converged_end"] = n + np_ + W.shape[-1]
        self.S[:, n + np_:ns] = W

    def _get_rayleigh_ritz_transform(self, S):
        """Ri with Ri^T (S^T B S) Ri = I: the general problem on span(S) as a standard one.
        The diagonal scaling d = diag(S^T B S)^-1/2 keeps the Cholesky factor well scaled."""
        SBS = qform(self.B, S)
        d_row = SBS.diagonal(0, -2, -1) ** -0.5
        d_col = d_row.reshape(d_row.shape[0], 1)
        R = linalg.cholesky((SBS * d_row) * d_col, upper=True)
        return linalg.solve_triangular(R, d_row.diag_embed(), upper=True, left=False)

    def _get_svqb(self, U, drop, tau):
        """B-orthonormal columns spanning U (SVQB, Stathopoulos and Wu 2002); with `drop`,
        the directions whose contribution is below tau are dropped."""
        if U.numel() == 0:
            return U
        UBU = qform(self.B, U)
        d = UBU.diagonal(0, -2, -1)
        nonzero = (d.abs() != 0).nonzero().reshape(-1)
        if nonzero.numel() < d.numel():
            U = U[:, nonzero]
            if U.numel() == 0:
                return U
            UBU = qform(self.B, U)
            d = UBU.diagonal(0, -2, -1)
        d_col = (d ** -0.5).reshape(d.shape[0], 1)
        values, Z = symeig((UBU * d_col) * d_col.mT)
        t = tau * float(values.abs().max())
        if drop:
            keep = (values > t).nonzero().reshape(-1)
            values, Z, d_col = values[keep], Z[:, keep], d_col[keep]
        else:
            values = E.where(values < t, t, values)
        return (U * d_col.mT).matmul(Z * values ** -0.5)

    def _get_ortho(self, U, V):
        """B-orthonormal columns spanning U, B-orthogonal to the B-orthonormal V (Duersch's
        algorithms 3 and 6): project V out, re-orthonormalize, repeat until both hold to tol."""
        m = self.iparams["m"]
        tau_ortho, tau_drop = self.fparams["ortho_tol"], self.fparams["ortho_tol_drop"]
        tau_replace = self.fparams["ortho_tol_replace"]
        i_max, j_max = self.iparams["ortho_i_max"], self.iparams["ortho_j_max"]
        use_drop = self.bparams["ortho_use_drop"]
        for key in [k for k in self.fvars if k.startswith("ortho_") and k.endswith("_rerr")]:
            self.fvars.pop(key)
        self.ivars.pop("ortho_i", 0)
        self.ivars.pop("ortho_j", 0)
        BV_norm = float(E.norm(matmul(self.B, V)))
        BU = matmul(self.B, U)
        VBU = V.mT.matmul(BU)
        i = j = 0
        for i in range(i_max):
            U = U - V.matmul(VBU)
            drop, tau_svqb = False, tau_drop
            for j in range(j_max):
                if use_drop:
                    U = self._get_svqb(U, drop, tau_svqb)
                    drop, tau_svqb = True, tau_replace
                else:
                    U = self._get_svqb(U, False, tau_replace)
                if U.numel() == 0:
                    self.ivars["ortho_i"], self.ivars["ortho_j"] = i, j
                    return U
                BU = matmul(self.B, U)
                UBU = U.mT.matmul(BU)
                residual = UBU - E.eye(UBU.shape[-1], dtype=UBU.dtype)
                rerr = float(E.norm(residual)) / float(E.norm(BU) * E.norm(U))
                self.fvars[f"ortho_UBUmI_rerr[{i}, {j}]"] = rerr
                if rerr < tau_ortho:
                    break
            VBU = V.mT.matmul(BU)
            rerr = float(E.norm(VBU)) / (BV_norm * float(E.norm(U)))
            self.fvars[f"ortho_VBU_rerr[{i}]"] = rerr
            if rerr < tau_ortho:
                break
            if m < U.shape[-1] + V.shape[-1]:
                raise ValueError(f"Overdetermined shape of U: #B-cols(={m}) >= "
                                 f"#U-cols(={U.shape[-1]}) + #V-cols(={V.shape[-1]}) must hold")
        self.ivars["ortho_i"], self.ivars["ortho_j"] = i, j
        return U


# ---- the function ---------------------------------------------------------------------------
def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None,
           method=None, tracker=None, ortho_iparams=None, ortho_fparams=None,
           ortho_bparams=None):
    """(E, X): the k largest (largest=True, the default) or smallest eigenvalues of the
    symmetric positive definite generalized problem A X = B X E, and their eigenvectors."""
    differentiable = is_grad_enabled() and (A.requires_grad or (
        B is not None and B.requires_grad))
    if differentiable and (A.is_sparse or B is not None):
        # as PyTorch: the forward runs, and backward says what it cannot do
        with no_grad():
            values, vectors = _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker,
                                      ortho_iparams, ortho_fparams, ortho_bparams)
        reason = ("lobpcg.backward does not support sparse input yet. Note that lobpcg.forward "
                  "does though." if A.is_sparse else
                  "lobpcg.backward does not support B != None yet.")
        return _Unsupported.apply(A if A.requires_grad else B, values, vectors, reason)
    if differentiable:
        A_sym = (A + A.mT) / 2
        with no_grad():
            values, vectors = _lobpcg(A_sym.detach(), k, None, X, n, iK, niter, tol, largest,
                                      method, tracker, ortho_iparams, ortho_fparams,
                                      ortho_bparams)
        return _differentiable_pairs(A_sym, values, vectors, largest)
    return _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams,
                   ortho_fparams, ortho_bparams)


class _Unsupported(Function):
    """Outputs that require grad and whose backward raises `reason` (ValueError, as PyTorch)."""

    @staticmethod
    def forward(ctx, source, values, vectors, reason):
        ctx.reason = reason
        return values.clone(), vectors.clone()

    @staticmethod
    def backward(ctx, grad_values, grad_vectors):
        raise ValueError(ctx.reason)


def _differentiable_pairs(A_sym, values, vectors, largest):
    """The eigenpairs of A_sym from linalg.eigh that the iteration found, with its signs:
    Note [lobpcg's gradient]."""
    k = values.shape[-1]
    all_values, all_vectors = symeig(A_sym, True if largest is None else largest)
    pairs_values, pairs_vectors = all_values[..., :k], all_vectors[..., :k]
    signs = E.sign((pairs_vectors * vectors).sum(-2, keepdim=True)).detach()
    signs = E.where(signs == 0, 1.0, signs)
    return pairs_values, pairs_vectors * signs


def _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams,
            ortho_fparams, ortho_bparams):
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and A.shape != B.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    dtype = get_floating_dtype(A)
    if tol is None:
        tol = {D.float32: 1.2e-07, D.float64: 2.23e-16}[dtype] ** 0.5
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m}) "
                         f"is smaller than 3 x the number of requested eigenpairs (={n})")
    method = "ortho" if method is None else method
    iparams = {"m": m, "n": n, "k": k, "niter": 1000 if niter is None else niter}
    fparams = {"tol": tol}
    bparams = {"largest": True if largest is None else largest}
    if method == "ortho":
        iparams.update(ortho_iparams or {})
        fparams.update(ortho_fparams or {})
        bparams.update(ortho_bparams or {})
        iparams.setdefault("ortho_i_max", 3)
        iparams.setdefault("ortho_j_max", 3)
        for key in ("ortho_tol", "ortho_tol_drop", "ortho_tol_replace"):
            fparams.setdefault(key, tol)
        bparams.setdefault("ortho_use_drop", False)

    def solve(A_, B_, X_):
        X_ = E.randn((m, n), dtype=dtype) if X_ is None else X_
        if not (X_.dim() == 2 and tuple(X_.shape) == (m, n)):
            raise AssertionError(f"X shape mismatch: got {X_.shape}, expected {(m, n)}")
        worker = LOBPCG(A_, B_, X_, iK, iparams, fparams, bparams, method, tracker)
        worker.run()
        return worker.E[:k], worker.X[:, :k]

    if A.dim() == 2:
        return solve(A, B, X)
    batch = tuple(A.shape[:-2])
    count = 1
    for size in batch:
        count *= size
    bA = A.reshape((count, m, m))
    bB = None if B is None else B.reshape((count, m, m))
    bX = None if X is None else X.reshape((count,) + tuple(X.shape[-2:]))
    results = []
    for i in range(count):
        iparams["batch_index"] = i
        results.append(solve(bA[i], None if bB is None else bB[i], None if bX is None else bX[i]))
    values = E.stack([r[0] for r in results]).reshape(batch + (k,))
    vectors = E.stack([r[1] for r in results]).reshape(batch + (m, k))
    return values, vectors

