"""Connectionist temporal classification (CPU and Meta): PyTorch's `_ctc_loss` and
`_ctc_loss_backward` (LossCTC.cpp), in NumPy.

A target of L labels is spread over the "extended" sequence of 2L+1 symbols: blank, l1, blank,
l2, ..., lL, blank. A path through time may stay on a symbol, step to the next one, or skip a
blank between two different labels. The forward variables

    alpha[t, s] = sum over paths at s at time t of prod_{t' <= t} p(t', l'_{s(t')})

and the backward variables beta (the same, from the end) are computed for the whole batch at
once, one time step per few NumPy operations (scaled probabilities, or logarithms where those
underflow: see _CTC). The loss of a sample is -log(alpha[T-1, 2L] + alpha[T-1, 2L-1]).

As in PyTorch, the forward returns log(alpha) as its second output, (N, T, 2 max(L) + 1), and
the backward op reads it from there: the backward recursion for beta is the only one it runs.
Entries past a sample's input or target length are -inf (PyTorch leaves them unwritten).

Like PyTorch, the gradient returned for `log_probs` is the gradient with respect to the logits
that produced them through log_softmax:

    grad[t, c] = exp(lp[t, c]) - exp(log sum_{s: l'_s = c} alpha[t, s] beta[t, s] + nll - lp[t, c])

(the first term is what log_softmax's backward would add to the true derivative; PyTorch folds
it in, so ember does too). Time steps past a sample's input length get no gradient. PyTorch has
no derivative for `_ctc_loss_backward`, and neither has ember.
"""
import numpy as np

from .._core import dtype as D
from .._dispatch.dispatcher import impl
from .._core.tensor import _wrap, _meta
from .elementwise import not_implemented


def _logsumexp3(a, b, c):
    return np.logaddexp(np.logaddexp(a, b), c)


def _shift(a, k, fill):
    """a moved k places along the symbol axis (last), `fill` shifted in."""
    out = np.full_like(a, fill)
    out[..., k:] = a[..., :-k]
    return out


def _shift_back(a, k, fill):
    """a moved k places towards the start of the symbol axis, `fill` shifted in."""
    out = np.full_like(a, fill)
    out[..., :-k] = a[..., k:]
    return out


_TINY = np.finfo(np.float64).tiny


def _by_class(v, onehot):
    """sum over s of v[t, n, s] * onehot[n, s, c]: one batched matrix product per sample."""
    return np.matmul(v.transpose(1, 0, 2), onehot).transpose(1, 0, 2)


class _CTC:
    """One batch's extended label sequences, the masks the recursions need, and the two ways
    of running them.

    The fast way works with probabilities and divides every time step by its sum (Rabiner's
    scaling), so it needs only products and sums; the scales' logarithms add up to the log-
    likelihood. It cannot tell a path probability that underflows float64 from a true zero, so
    when a step's sum or a sample's final probability is zero the batch is redone exactly in
    log space (log-sum-exp, several times slower in NumPy); impossible alignments take that
    path too. The backward pass does the same with beta.
    """

    def __init__(self, lp, targets, target_lengths, input_lengths, blank):
        n, max_len = targets.shape
        self.lp = lp
        self.lengths = target_lengths
        self.input_lengths = input_lengths
        # past a target's end the symbols are blanks too: every symbol's emission is then
        # one a valid symbol has (the blank's, at s = 0), so a step's best is over all s
        self.ext = np.full((n, 2 * max_len + 1), blank, np.int64)
        self.ext[:, 1::2] = np.where(np.arange(max_len) < target_lengths[:, None], targets,
                                     blank)
        s = np.arange(2 * max_len + 1)
        self.valid = s[None, :] < (2 * target_lengths + 1)[:, None]          # (N, S)
        prev2 = np.full_like(self.ext, -1)
        prev2[:, 2:] = self.ext[:, :-2]
        # a label may be reached from two symbols back unless that symbol is the same label
        self.can_skip = (self.ext != blank) & (self.ext != prev2)
        self.skip_from = np.zeros_like(self.can_skip)      # s may be followed by s + 2
        self.skip_from[:, :-2] = self.can_skip[:, 2:]
        has_label = (target_lengths > 0)[:, None]
        self.first = (s == 0) | ((s == 1) & has_label)     # where paths start ...
        last = 2 * target_lengths[:, None]
        self.last = (s == last) | ((s == last - 1) & has_label)   # ... and end
        self.em = lp[:, np.arange(n)[:, None], self.ext]     # lp[t, n, l'_s]: (T, N, S)
        self.alive = np.arange(lp.shape[0])[:, None] < input_lengths[None, :]   # (T, N)
        self._pe = None

    def log_likelihood(self):
        """Every sample's log-likelihood (N,); leaves log(alpha) (T, N, S) in self.log_alpha."""
        t_max, n = self.em.shape[:2]
        t_last = np.maximum(self.input_lengths - 1, 0)
        rows = np.arange(n)
        if t_max:
            ll = self._scaled_alpha()
            if ll is None:
                la = self.log_alpha = self._log_alpha()
                ends = np.where(self.last, la[t_last, rows], -np.inf)
                m = ends.max(1)
                m = np.where(np.isfinite(m), m, 0.0)
                with np.errstate(divide="ignore"):
                    ll = np.log(np.exp(ends - m[:, None]).sum(1)) + m
        else:
            ll = np.zeros(n)
            self.log_alpha = np.zeros(self.em.shape)
        self.log_alpha[~self.alive] = -np.inf
        empty = self.input_lengths == 0
        ll[empty] = np.where(self.lengths[empty] == 0, 0.0, -np.inf)
        return ll

    def _emissions(self):
        """Each step's emission probabilities relative to its best valid one: exp(em - q).
        The exponentials are taken over classes or over symbols, whichever are fewer (a
        target's labels repeat classes; a large vocabulary has more classes than symbols)."""
        if self._pe is None:
            q = np.max(self.em, axis=2, keepdims=True)
            q[~np.isfinite(q)] = 0.0
            self._q = q
            source = self.lp if self.lp.shape[2] < self.em.shape[2] else self.em
            with np.errstate(under="ignore", over="ignore"):
                pe = np.subtract(source, q)
                np.exp(pe, out=pe)
            if source is self.lp:
                pe = pe[:, np.arange(pe.shape[1])[:, None], self.ext]
            pe *= self.valid
            self._pe = pe
        return self._pe

    def _scaled_alpha(self):
        pe = self._emissions()
        t_max, n, s = pe.shape
        a_hat = np.empty((t_max, n, s))
        sums = np.empty((t_max, n))
        skip = self.can_skip[:, 2:].astype(np.float64)
        skipped = np.empty((n, max(s - 2, 0)))
        for t in range(t_max):
            a = a_hat[t]
            if t:  # stay on s, come from s - 1, or skip from s - 2
                prev = a_hat[t - 1]
                a[...] = prev
                a[:, 1:] += prev[:, :-1]
                a[:, 2:] += np.multiply(prev[:, :-2], skip, out=skipped)
                a *= pe[t]
            else:
                np.multiply(self.first, pe[0], out=a)
            c = a.sum(1)
            sums[t] = np.maximum(c, _TINY, out=c)
            a /= c[:, None]
        if ((sums == _TINY) & self.alive).any():
            return None  # a step's sum is zero (or below float64's normal range)
        t_last = np.maximum(self.input_lengths - 1, 0)
        rows = np.arange(n)
        end = np.where(self.last, a_hat[t_last, rows], 0.0).sum(1)
        if ((end == 0) & (self.input_lengths > 0)).any():
            return None  # an impossible alignment, or an underflow: only log space can tell
        with np.errstate(divide="ignore", invalid="ignore"):
            cum = np.cumsum(np.log(sums) + self._q[:, :, 0], 0)
            self.log_alpha = np.log(a_hat, out=a_hat)
            self.log_alpha += cum[:, :, None]
            return np.log(end) + cum[t_last, rows]

    def _scaled_beta(self):
        """The probability of completing the target after time t from symbol s, without
        time t's own emission; scaled per step like alpha. Only its ratios within a step
        matter (see occupancy), so a step is divided by its sum, or by the smallest normal
        number where that sum is zero or below it. Symbols past a target and steps past an
        input need no mask: their emissions are zero, and nothing runs into them."""
        pe = self._emissions()
        t_max, n, s = pe.shape
        b_hat = np.empty((t_max, n, s))
        skip = self.skip_from[:, :-2].astype(np.float64)
        ends = self.input_lengths - 1
        starts = {int(t): np.flatnonzero(ends == t) for t in np.unique(ends[ends >= 0])}
        nxt, skipped = np.empty((n, s)), np.empty((n, max(s - 2, 0)))
        for t in range(t_max - 1, -1, -1):
            b = b_hat[t]
            if t < t_max - 1:  # stay on s, go on to s + 1, or skip to s + 2
                np.multiply(b_hat[t + 1], pe[t + 1], out=nxt)
                b[...] = nxt
                b[:, :-1] += nxt[:, 1:]
                b[:, :-2] += np.multiply(nxt[:, 2:], skip, out=skipped)
            else:
                b[...] = 0.0
            rows = starts.get(t)
            if rows is not None:
                b[rows] = self.last[rows]
            d = b.sum(1)
            b /= np.maximum(d, _TINY, out=d)[:, None]
        return b_hat

    def _log_alpha(self):
        em = self.em
        la = np.full(em.shape, -np.inf)
        la[0] = np.where(self.first, em[0], -np.inf)
        for t in range(1, em.shape[0]):
            a = la[t - 1]
            skip = np.where(self.can_skip, _shift(a, 2, -np.inf), -np.inf)
            la[t] = _logsumexp3(a, _shift(a, 1, -np.inf), skip) + em[t]
        la[:, ~self.valid] = -np.inf
        return la

    def _log_beta(self):
        """Log-space beta, including time t's emission as PyTorch's does."""
        em = self.em
        lb = np.full(em.shape, -np.inf)
        init = np.where(self.last, 0.0, -np.inf)
        nxt = np.full(em.shape[1:], -np.inf)
        for t in range(em.shape[0] - 1, -1, -1):
            skip = np.where(self.skip_from, _shift_back(nxt, 2, -np.inf), -np.inf)
            b = _logsumexp3(nxt, _shift_back(nxt, 1, -np.inf), skip)
            start = (self.input_lengths - 1) == t
            b[start] = init[start]
            b[~self.alive[t]] = -np.inf
            lb[t] = nxt = np.where(self.valid, b + em[t], -np.inf)
        return lb

    def occupancy(self, nll, log_alpha):
        """For every (t, n, c): the posterior probability that the path emits class c at time
        t, i.e. sum over s with l'_s = c of alpha beta, divided by the likelihood. Alpha and
        beta only matter up to a factor per (t, n), so the scaled beta and alpha divided by its
        largest entry per (t, n) give it, unless a product underflows (then: log space)."""
        c = self.lp.shape[2]
        onehot = (self.ext[:, :, None] == np.arange(c)).astype(np.float64)   # (N, S, C)
        m = np.max(log_alpha, axis=2, keepdims=True)
        m[~np.isfinite(m)] = 0.0
        with np.errstate(under="ignore"):
            gamma = np.subtract(log_alpha, m, dtype=np.float64)
            np.exp(gamma, out=gamma)
        gamma *= self._scaled_beta()
        z = gamma.sum(2, keepdims=True)
        if not ((z[..., 0] == 0) & self.alive & np.isfinite(nll)).any():
            with np.errstate(divide="ignore", invalid="ignore"):
                return _by_class(gamma, onehot) / z
        v = log_alpha + self._log_beta()                             # (T, N, S)
        m = np.max(v, axis=2, keepdims=True)
        m = np.where(np.isfinite(m), m, 0.0)
        acc = _by_class(np.exp(v - m), onehot)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.exp(np.log(acc) + m + nll[None, :, None] - self.lp)


# ---- checks and target layouts ----------------------------------------------------------------
_WHERE = "(while checking arguments for ctc_loss_allocate_outputs)"


def _check(log_probs, targets, input_lengths, target_lengths, blank):
    """PyTorch's checks; the lengths as int64 arrays."""
    il = np.asarray(input_lengths, dtype=np.int64).reshape(-1)
    tl = np.asarray(target_lengths, dtype=np.int64).reshape(-1)
    if log_probs.dim() != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.dim()}-dimensional "
                           f"tensor for argument #1 'log_probs' {_WHERE}")
    if not 1 <= targets.dim() <= 2:
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.dim()}-dimensional "
                           f"tensor for argument #2 'targets' {_WHERE}")
    if log_probs.dtype not in (D.float32, D.float64):
        raise not_implemented("ctc_loss_cpu", log_probs.dtype)
    t_max, n, c = log_probs.shape
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    if len(il) != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tl) != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    # PyTorch's order: the target lengths, the targets' sizes they imply, then each input length
    for v in tl:
        if v < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value "
                               f"{int(v)} {_WHERE}")
    if targets.dim() == 1:
        if targets.shape[0] != int(tl.sum()):
            raise _target_size_error(0, int(tl.sum()), targets.shape[0])
    else:
        if targets.shape[0] != n:
            raise _target_size_error(0, n, targets.shape[0])
        if n and targets.shape[1] < int(tl.max()):
            raise _target_size_error(1, int(tl.max()), targets.shape[1], at_least=True)
    for v in il:
        if v < 0 or v > t_max:
            raise RuntimeError(f"Expected input_lengths to have value at "
                               f"{'least 0' if v < 0 else f'most {t_max}'}, but got value "
                               f"{int(v)} {_WHERE}")
    return il, tl


def _target_size_error(dim, expected, got, at_least=False):
    least = "at least " if at_least else ""
    return RuntimeError(f"Expected tensor to have size {least}{expected} at dimension {dim}, "
                        f"but got size {got} for argument #2 'targets' {_WHERE}")


def _padded_targets(targets, target_lengths, n):
    """Targets as an (N, max target length) int64 array, from the padded or the
    concatenated layout, with PyTorch's size checks."""
    t = targets._np.astype(np.int64)
    max_len = int(target_lengths.max()) if n else 0
    if t.ndim == 1:
        total = int(target_lengths.sum())
        if t.shape[0] != total:
            raise _target_size_error(0, total, t.shape[0])
        out = np.zeros((n, max_len), np.int64)
        offsets = np.concatenate([[0], np.cumsum(target_lengths)[:-1]]).astype(np.int64)
        for b in range(n):
            out[b, :target_lengths[b]] = t[offsets[b]:offsets[b] + target_lengths[b]]
        return out
    if t.shape[0] != n:
        raise _target_size_error(0, n, t.shape[0])
    if t.shape[1] < max_len:
        raise _target_size_error(1, max_len, t.shape[1], at_least=True)
    keep = np.arange(max_len)[None, :] < target_lengths[:, None]
    return np.where(keep, t[:, :max_len], 0)


def _setup(log_probs, targets, input_lengths, target_lengths, blank):
    il, tl = _check(log_probs, targets, input_lengths, target_lengths, blank)
    tg = _padded_targets(targets, tl, log_probs.shape[1])
    classes = log_probs.shape[2]
    if tg.size and (tg.min() < 0 or tg.max() >= classes):
        raise IndexError(f"ctc_loss: target labels must lie in [0, {classes}), got "
                         f"{int(tg.min())}..{int(tg.max())}")
    return _CTC(log_probs._np.astype(np.float64), tg, tl, il, blank)


# ---- kernels ----------------------------------------------------------------------------------
@impl("_ctc_loss", "CPU")
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=False):
    """(per-sample negative log-likelihoods (N,), log(alpha) (N, T, S))."""
    ctc = _setup(log_probs, targets, input_lengths, target_lengths, blank)
    nll = -ctc.log_likelihood()
    dt = log_probs.dtype._np
    return (_wrap(nll.astype(dt)),
            _wrap(np.ascontiguousarray(ctc.log_alpha.transpose(1, 0, 2), dt)))


@impl("_ctc_loss", "Meta")
def ctc_loss_meta(log_probs, targets, input_lengths, target_lengths, blank=0,
                  zero_infinity=False):
    _il, tl = _check(log_probs, targets, input_lengths, target_lengths, blank)
    t_max, n = log_probs.shape[:2]
    s = 2 * int(tl.max() if n else 0) + 1
    return (_meta((n,), log_probs.dtype, device=log_probs.device),
            _meta((n, t_max, s), log_probs.dtype, device=log_probs.device))


@impl("_ctc_loss_backward", "CPU")
def ctc_loss_backward(grad, log_probs, targets, input_lengths, target_lengths,
                      neg_log_likelihood, log_alpha, blank, zero_infinity=False):
    ctc = _setup(log_probs, targets, input_lengths, target_lengths, blank)
    nll = neg_log_likelihood._np.astype(np.float64)
    la = log_alpha._np.transpose(1, 0, 2)    # (T, N, S), in the log_probs' dtype
    with np.errstate(invalid="ignore"):
        g = np.exp(ctc.lp) - ctc.occupancy(nll, la)
    g[np.isneginf(ctc.lp)] = np.nan  # PyTorch's formula divides by exp(lp) = 0 there
    g[~ctc.alive] = 0.0
    if zero_infinity:
        g[:, np.isinf(nll)] = 0.0
    g *= grad._np.astype(np.float64)[None, :, None]
    return _wrap(g.astype(log_probs.dtype._np))


@impl("_ctc_loss_backward", "Meta")
def ctc_loss_backward_meta(grad, log_probs, targets, input_lengths, target_lengths,
                           neg_log_likelihood, log_alpha, blank, zero_infinity=False):
    _check(log_probs, targets, input_lengths, target_lengths, blank)
    return _meta(log_probs.shape, log_probs.dtype, device=log_probs.device)
