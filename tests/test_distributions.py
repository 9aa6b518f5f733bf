"""ember.distributions against torch.distributions on the same inputs: shapes, log_prob,
entropy, mean/variance/mode, cdf/icdf and their gradients; samples with the same seed;
KL divergences through the registry; transforms; constraint errors and their messages."""
import math

import numpy as np
import pytest

import ember
import ember.distributions as ED
from _torch_oracle import assert_same

torch = pytest.importorskip("torch")
import torch.distributions as TD  # noqa: E402

R = np.random.default_rng(0)


def pos(*shape):
    return R.uniform(0.5, 2.5, size=shape)


def unit(*shape):
    return R.uniform(0.1, 0.9, size=shape)


def real(*shape):
    return R.normal(size=shape)


def simplex(*shape):
    x = R.uniform(0.2, 1.0, size=shape)
    return x / x.sum(-1, keepdims=True)


def spd(n):
    a = R.normal(size=(n, n))
    return a @ a.T + n * np.eye(n)


def tril(n):
    m = np.tril(R.normal(size=(n, n)) * 0.3)
    np.fill_diagonal(m, R.uniform(0.5, 1.5, size=n))
    return m


def counts(total, *shape):
    k = shape[-1]
    flat = [R.multinomial(total, np.ones(k) / k) for _ in range(int(np.prod(shape[:-1])))]
    return np.array(flat, dtype=np.float64).reshape(shape)


def build(arrays, requires_grad=True):
    """The same float64 parameters as ember tensors and torch tensors."""
    e = [ember.tensor(a, dtype=ember.float64, requires_grad=requires_grad) for a in arrays]
    t = [torch.tensor(a, dtype=torch.float64, requires_grad=requires_grad) for a in arrays]
    return e, t


# name -> (constructor(D, *params), params, value, bit-exact samples with the same seed)
CASES = {
    "Normal": (lambda D, a, b: D.Normal(a, b), [real(3), pos(3)], real(4, 3), True),
    "Uniform": (lambda D, a, b: D.Uniform(a, a + b), [real(3), pos(3)], None, True),
    "Exponential": (lambda D, r: D.Exponential(r), [pos(3)], pos(4, 3), True),
    "Laplace": (lambda D, a, b: D.Laplace(a, b), [real(3), pos(3)], real(4, 3), True),
    "Cauchy": (lambda D, a, b: D.Cauchy(a, b), [real(3), pos(3)], real(4, 3), True),
    "LogNormal": (lambda D, a, b: D.LogNormal(a, b), [real(3), pos(3)], pos(4, 3), True),
    "Gumbel": (lambda D, a, b: D.Gumbel(a, b), [real(3), pos(3)], real(4, 3), True),
    "HalfNormal": (lambda D, s: D.HalfNormal(s), [pos(3)], pos(4, 3), True),
    "HalfCauchy": (lambda D, s: D.HalfCauchy(s), [pos(3)], pos(4, 3), True),
    "Pareto": (lambda D, s, a: D.Pareto(s, a + 2), [pos(3), pos(3)], pos(4, 3) + 3, True),
    "Weibull": (lambda D, s, c: D.Weibull(s, c), [pos(3), pos(3)], pos(4, 3), True),
    "Bernoulli": (lambda D, p: D.Bernoulli(probs=p), [unit(3)],
                  R.integers(0, 2, (4, 3)).astype(float), True),
    "BernoulliLogits": (lambda D, l: D.Bernoulli(logits=l), [real(3)],
                        R.integers(0, 2, (4, 3)).astype(float), True),
    "Geometric": (lambda D, p: D.Geometric(probs=p), [unit(3)],
                  R.integers(0, 6, (4, 3)).astype(float), True),
    "Poisson": (lambda D, r: D.Poisson(r * 3), [pos(3)],
                R.integers(0, 8, (4, 3)).astype(float), True),
    "Categorical": (lambda D, p: D.Categorical(probs=p), [simplex(2, 4)],
                    R.integers(0, 4, (5, 2)).astype(float), True),
    "CategoricalLogits": (lambda D, l: D.Categorical(logits=l), [real(2, 4)],
                          R.integers(0, 4, (5, 2)).astype(float), True),
    "OneHotCategorical": (lambda D, p: D.OneHotCategorical(probs=p), [simplex(2, 4)],
                          np.eye(4)[R.integers(0, 4, (5, 2))], True),
    "Multinomial": (lambda D, p: D.Multinomial(6, probs=p), [simplex(2, 3)], counts(6, 5, 2, 3),
                    True),
    "Binomial": (lambda D, p: D.Binomial(10, probs=p), [unit(3)],
                 R.integers(0, 11, (4, 3)).astype(float), False),
    "BinomialLogits": (lambda D, l: D.Binomial(ember.tensor(10.) if D is ED else torch.tensor(10.),
                                                  logits=l), [real(3)],
                       R.integers(0, 11, (4, 3)).astype(float), False),
    "Gamma": (lambda D, c, r: D.Gamma(c, r), [pos(3), pos(3)], pos(4, 3), False),
    "Chi2": (lambda D, df: D.Chi2(df), [pos(3)], pos(4, 3), False),
    "Beta": (lambda D, a, b: D.Beta(a, b), [pos(3), pos(3)], unit(4, 3), False),
    "Dirichlet": (lambda D, c: D.Dirichlet(c), [pos(2, 3)], simplex(4, 2, 3), False),
    "StudentT": (lambda D, df, a, b: D.StudentT(df + 2, a, b), [pos(3), real(3), pos(3)],
                 real(4, 3), False),
    "MultivariateNormal": (lambda D, m, L: D.MultivariateNormal(m, scale_tril=L),
                           [real(2, 3), tril(3)], real(4, 2, 3), True),
    "MultivariateNormalCov": (lambda D, m, C: D.MultivariateNormal(m, covariance_matrix=C),
                              [real(2, 3), spd(3)], real(4, 2, 3), True),
    "MultivariateNormalPrec": (lambda D, m, P: D.MultivariateNormal(m, precision_matrix=P),
                               [real(3), spd(3)], real(4, 3), True),
    "Independent": (lambda D, a, b: D.Independent(D.Normal(a, b), 1), [real(2, 3), pos(2, 3)],
                    real(4, 2, 3), True),
    "MixtureSameFamily": (lambda D, w, a, b: D.MixtureSameFamily(D.Categorical(probs=w),
                                                                    D.Normal(a, b)),
                          [simplex(2, 3), real(2, 3), pos(2, 3)], real(4, 2), True),
    "RelaxedBernoulli": (lambda D, t, p: D.RelaxedBernoulli(t, probs=p), [pos(3), unit(3)],
                         unit(4, 3), True),
    "RelaxedOneHotCategorical": (lambda D, t, p: D.RelaxedOneHotCategorical(t, probs=p),
                                 [np.array(0.7), simplex(2, 4)], simplex(5, 2, 4), True),
    "LowRankMultivariateNormal": (lambda D, m, W, d: D.LowRankMultivariateNormal(m, W, d),
                                  [real(2, 3), real(3, 2), pos(3)], real(4, 2, 3), True),
    "VonMises": (lambda D, a, k: D.VonMises(a, k * 2), [real(3), pos(3)], real(4, 3), True),
    "ContinuousBernoulli": (lambda D, p: D.ContinuousBernoulli(probs=p), [unit(3)], unit(4, 3),
                            True),
    "ContinuousBernoulliLogits": (lambda D, l: D.ContinuousBernoulli(logits=l), [real(3)],
                                  unit(4, 3), True),
    "InverseGamma": (lambda D, c, r: D.InverseGamma(c + 2, r), [pos(3), pos(3)], pos(4, 3),
                     False),
    "Kumaraswamy": (lambda D, a, b: D.Kumaraswamy(a + 1, b + 1), [pos(3), pos(3)], unit(4, 3),
                    True),
    "LogisticNormal": (lambda D, a, b: D.LogisticNormal(a, b), [real(2, 3), pos(2, 3)],
                       simplex(4, 2, 4), True),
    "NegativeBinomial": (lambda D, r, p: D.NegativeBinomial(r * 3, probs=p), [pos(3), unit(3)],
                         R.integers(0, 8, (4, 3)).astype(float), False),
    "NegativeBinomialLogits": (lambda D, r, l: D.NegativeBinomial(r * 3, logits=l),
                               [pos(3), real(3)], R.integers(0, 8, (4, 3)).astype(float), False),
    # df1 > 2 and df2 > 4: mean, mode and variance defined (PyTorch's nan-masking of the
    # others is in-place, which makes even the defined entries' gradients nan)
    "FisherSnedecor": (lambda D, a, b: D.FisherSnedecor(a * 2 + 2, b * 3 + 4), [pos(3), pos(3)],
                       pos(4, 3), False),
    "TransformedAffineExp": (lambda D, a, b: D.TransformedDistribution(
        D.Normal(a, b), [D.ExpTransform(), D.AffineTransform(1.0, 2.0)]),
        [real(3), pos(3)], pos(4, 3) + 1, True),
}


def test_where_backward_drops_nan_gradients():
    """clamp/where backward select (PyTorch's formulas), so the NaN gradient of an element the
    output does not depend on is dropped (Dirichlet.mode divides 0 by 0 for rows it then
    overwrites: its gradients are compared in test_values_and_gradients)."""
    x = ember.tensor([-1.0, 2.0], requires_grad=True)
    x.clamp(min=0).backward(ember.tensor([math.nan, 1.0]))
    assert x.grad.tolist() == [0.0, 1.0]


def _try(fn):
    try:
        return fn(), None
    except NotImplementedError as e:
        return None, e


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients(name):
    make, params, value, _ = CASES[name]
    ep, tp = build(params)
    e, t = make(ED, *ep), make(TD, *tp)
    assert e.batch_shape == t.batch_shape and e.event_shape == t.event_shape
    assert e.has_rsample == t.has_rsample
    assert e.support.is_discrete == t.support.is_discrete
    assert e.support.event_dim == t.support.event_dim

    if value is None:  # Uniform: values inside [low, high)
        value = params[0] + params[1] * unit(4, 3)
    ev, tv = ember.tensor(value), torch.tensor(value)
    outputs = [("log_prob", lambda d, v: d.log_prob(v))]
    for prop in ("mean", "variance", "stddev", "mode"):
        outputs.append((prop, lambda d, v, prop=prop: getattr(d, prop)))
    outputs.append(("entropy", lambda d, v: d.entropy()))
    if name in ("Normal", "Uniform", "Exponential", "Laplace", "Cauchy", "LogNormal",
                "HalfNormal", "HalfCauchy", "ContinuousBernoulli"):
        outputs.append(("cdf", lambda d, v: d.cdf(v)))
    if name == "Gamma":  # gammainc has no derivative in its first argument, in either library
        assert_same(e.cdf(ev), t.cdf(tv), atol=1e-10, rtol=1e-9, path="Gamma.cdf")
    if name in ("Normal", "Uniform", "Exponential", "Laplace", "Cauchy", "LogNormal",
                "HalfNormal", "HalfCauchy", "ContinuousBernoulli"):
        probs = unit(4, 3)
        outputs.append(("icdf", lambda d, v: d.icdf(ember.tensor(probs) if d is e
                                                    else torch.tensor(probs))))
    losses_e, losses_t = [], []
    for what, fn in outputs:
        te, terr = _try(lambda: fn(t, tv))
        ee, eerr = _try(lambda: fn(e, ev))
        assert (terr is None) == (eerr is None), f"{name}.{what}: {eerr!r} vs torch {terr!r}"
        if te is None:
            continue
        assert_same(ee, te, atol=1e-8, rtol=1e-7, path=f"{name}.{what}")
        finite = torch.isfinite(te)
        if te.requires_grad and bool(finite.any()):
            mask_e = ember.tensor(finite.numpy())
            losses_e.append(ember.where(mask_e, ee, 0.0).sum())
            losses_t.append(torch.where(finite, te, 0.0).sum())
    ge = ember.autograd.grad(sum(losses_e), ep, allow_unused=True)
    gt = torch.autograd.grad(sum(losses_t), tp, allow_unused=True)
    for i, (a, b) in enumerate(zip(ge, gt)):
        if b is None:
            assert a is None or not a.abs().sum().item()
        else:
            assert_same(a, b, atol=1e-8, rtol=1e-6, path=f"{name}.grad[{i}]")


@pytest.mark.parametrize("name", sorted(CASES))
def test_samples(name):
    make, params, _, exact = CASES[name]
    ep, tp = build(params)
    e, t = make(ED, *ep), make(TD, *tp)
    ember.manual_seed(7)
    torch.manual_seed(7)
    es, ts = e.sample((5,)), t.sample((5,))
    assert es.shape == ts.shape and str(es.dtype) == str(ts.dtype) and not es.requires_grad
    if exact:
        assert_same(es, ts, atol=1e-12, rtol=1e-12, path=f"{name}.sample")
    if not t.has_rsample:
        return
    ember.manual_seed(8)
    torch.manual_seed(8)
    er, tr = e.rsample((2,)), t.rsample((2,))
    assert er.shape == tr.shape and er.requires_grad
    if exact:
        assert_same(er, tr, atol=1e-10, rtol=1e-10, path=f"{name}.rsample")
        weights = R.normal(size=tuple(tr.shape))
        ge = ember.autograd.grad((er * ember.tensor(weights)).sum(), ep, allow_unused=True)
        gt = torch.autograd.grad((tr * torch.tensor(weights)).sum(), tp, allow_unused=True)
        for i, (a, b) in enumerate(zip(ge, gt)):
            if b is not None:
                assert_same(a, b, atol=1e-8, rtol=1e-6, path=f"{name}.rsample.grad[{i}]")


@pytest.mark.parametrize("path", ["tables", "scalar", "short blocks"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gamma_draws_equal_torchs(path, dtype, monkeypatch):
    """_standard_gamma and _sample_dirichlet draw torch's values for a seed, and leave the
    generator (its normal cache included) where torch's is: by the table walk (few distinct
    alphas), by the scalar loop (many), and across blocks of uniforms that run out."""
    from ember._refs import sampling
    monkeypatch.setattr(sampling, "_MAX_TABLES", 0 if path == "scalar" else 10)
    if path == "short blocks":
        monkeypatch.setattr(sampling, "_UNIFORMS_PER_DRAW", 0.2)
        monkeypatch.setattr(sampling, "_UNIFORMS_PER_BOOST", 0.1)
    alphas = [0.3, 2.0, 0.0, 7.5, float("nan")]

    def draws(m):
        m.manual_seed(5)
        dt = getattr(m, dtype)
        m.randn(1)  # a cached normal half for the first draw
        out = [m._standard_gamma(m.full((3000,), 1.7, dtype=dt)),
               m._standard_gamma(m.tensor(alphas * 300, dtype=dt)),
               m._sample_dirichlet(m.tensor([0.4, 1.0, 3.0], dtype=dt).expand(400, 3)),
               m.distributions.Beta(m.tensor(0.5, dtype=dt), m.tensor(2.0, dtype=dt))
               .sample((500,)),
               m.randn(3, dtype=dt)]
        return [o.numpy() for o in out]
    for e, t in zip(draws(ember), draws(torch)):
        assert e.dtype == t.dtype and np.array_equal(e, t, equal_nan=True)


@pytest.mark.parametrize("name,make,params", [
    ("Gamma", lambda D, a, b: D.Gamma(a, b), [[0.7, 3.0, 12.0], [1.0, 2.0, 0.5]]),
    ("Beta", lambda D, a, b: D.Beta(a, b), [[0.7, 3.0, 9.0], [2.0, 0.5, 7.0]]),
    ("Dirichlet", lambda D, a: D.Dirichlet(a), [[0.5, 2.0, 5.0]]),
    ("StudentT", lambda D, df: D.StudentT(df), [[5.0, 9.0]]),
    ("Binomial", lambda D, p: D.Binomial(20, probs=p), [[0.1, 0.5, 0.9]]),
])
def test_statistical_samples(name, make, params):
    """Families whose sampler is not PyTorch's stream: moments of many draws."""
    ember.manual_seed(0)
    d = make(ED, *[ember.tensor(p, dtype=ember.float64) for p in params])
    x = d.sample((20000,))
    mean, var = x.mean(0), x.var(0)
    se = (d.variance / 20000).sqrt()
    assert bool(((mean - d.mean).abs() < 5 * se).all()), (mean, d.mean)
    assert bool(((var / d.variance - 1).abs() < 0.1).all()), (var, d.variance)
    assert bool(d.support.check(x).all())


def test_gamma_and_dirichlet_reparameterised_gradients():
    """The implicit gradient of a draw equals PyTorch's kernel on the same (alpha, x)."""
    from ember.distributions._reparam_gradients import dirichlet_grad, standard_gamma_grad
    alpha = np.array([0.3, 0.9, 2.5, 5.0, 9.0, 30.0, 100.0])[:, None] * np.ones((1, 9))
    x = alpha * np.array([0.01, 0.2, 0.7, 0.95, 1.0, 1.05, 1.5, 3.0, 6.0])[None, :]
    x = np.concatenate([x, np.full((7, 1), 0.5)], 1)
    alpha = np.concatenate([alpha, alpha[:, :1]], 1)
    got = standard_gamma_grad(ember.tensor(alpha), ember.tensor(x))
    want = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x))
    assert_same(got, want, atol=1e-10, rtol=1e-9)

    xs = np.array([0.001, 0.05, 0.3, 0.5, 0.7, 0.95, 0.999])
    a = np.array([0.4, 1.5, 4.0, 8.0, 20.0])
    tot = np.array([1.0, 3.0, 10.0, 15.0, 60.0])
    X, A, T = np.meshgrid(xs, a, tot, indexing="ij")
    T = np.maximum(T, A + 0.3)
    got = dirichlet_grad(ember.tensor(X), ember.tensor(A), ember.tensor(T))
    want = torch._dirichlet_grad(torch.tensor(X), torch.tensor(A), torch.tensor(T))
    assert_same(got, want, atol=1e-10, rtol=1e-8)

    # through rsample: d(sample)/d(concentration) is the kernel at the drawn value
    conc = ember.tensor([0.6, 2.0, 15.0], dtype=ember.float64, requires_grad=True)
    rate = ember.tensor([1.0, 2.0, 0.5], dtype=ember.float64, requires_grad=True)
    s = ED.Gamma(conc, rate).rsample()
    gc, gr = ember.autograd.grad(s.sum(), [conc, rate])
    z = torch.tensor(s.detach().numpy() * rate.detach().numpy())
    want = torch._standard_gamma_grad(torch.tensor(conc.detach().numpy()), z) / torch.tensor(
        rate.detach().numpy())
    assert_same(gc, want, atol=1e-10, rtol=1e-9)
    assert_same(gr, torch.tensor(-s.detach().numpy() / rate.detach().numpy()), rtol=1e-12)

    conc = ember.tensor([[0.6, 2.0, 15.0]], dtype=ember.float64, requires_grad=True)
    s = ED.Dirichlet(conc).rsample()
    w = R.normal(size=(1, 3))
    (g,) = ember.autograd.grad((s * ember.tensor(w)).sum(), [conc])
    from torch.distributions.dirichlet import _Dirichlet_backward
    want = _Dirichlet_backward(torch.tensor(s.detach().numpy()), torch.tensor(conc.detach().numpy()),
                               torch.tensor(w))
    assert_same(g, want, atol=1e-10, rtol=1e-9)
    assert abs(float(s.sum()) - 1) < 1e-12
    b = ED.Beta(conc[0, :1].squeeze(), conc[0, 1:2].squeeze()).rsample((3,))
    assert b.shape == (3,) and b.requires_grad


def _perturb(a):
    """Other parameters satisfying the same constraints: square matrices (lower Cholesky or
    positive definite) scaled, vectors rotated along the last dim."""
    if a.ndim >= 2 and a.shape[-1] == a.shape[-2]:
        return a * 1.3
    return np.roll(a, 1, axis=-1)


def _pair(name, perturb=False):
    make, params, _, _ = CASES[name]
    ep, tp = build([_perturb(a) for a in params] if perturb else params)
    return make(ED, *ep), make(TD, *tp), ep, tp


KL_PAIRS = [
    ("Normal", "Normal"), ("Bernoulli", "Bernoulli"), ("Beta", "Beta"), ("Binomial", "Binomial"),
    ("Categorical", "Categorical"), ("Dirichlet", "Dirichlet"), ("Exponential", "Exponential"),
    ("Gamma", "Gamma"), ("Gumbel", "Gumbel"), ("Geometric", "Geometric"),
    ("HalfNormal", "HalfNormal"), ("Laplace", "Laplace"),
    ("MultivariateNormal", "MultivariateNormalCov"), ("OneHotCategorical", "OneHotCategorical"),
    ("Pareto", "Pareto"), ("Poisson", "Poisson"), ("Uniform", "Uniform"),
    ("Independent", "Independent"), ("Cauchy", "Cauchy"), ("LogNormal", "LogNormal"),
    ("Chi2", "Chi2"), ("Bernoulli", "Poisson"), ("Beta", "Exponential"), ("Beta", "Gamma"),
    ("Beta", "Normal"), ("Beta", "Uniform"), ("Exponential", "Gamma"), ("Exponential", "Gumbel"),
    ("Exponential", "Normal"), ("Gamma", "Exponential"), ("Gamma", "Gumbel"),
    ("Gamma", "Normal"), ("Gumbel", "Normal"), ("Laplace", "Normal"), ("Normal", "Gumbel"),
    ("Normal", "Laplace"), ("Pareto", "Exponential"), ("Pareto", "Gamma"), ("Pareto", "Normal"),
    ("Uniform", "Beta"), ("Uniform", "Exponential"), ("Uniform", "Gamma"), ("Uniform", "Gumbel"),
    ("Uniform", "Normal"), ("Uniform", "Pareto"), ("Normal", "Exponential"),
    ("Poisson", "Bernoulli"), ("Exponential", "Uniform"), ("Weibull", "Weibull"),
    ("ContinuousBernoulli", "ContinuousBernoulli"), ("Beta", "ContinuousBernoulli"),
    ("Uniform", "ContinuousBernoulli"), ("ContinuousBernoulli", "Exponential"),
    ("ContinuousBernoulli", "Normal"), ("ContinuousBernoulli", "Uniform"),
    ("ContinuousBernoulli", "Pareto"), ("Normal", "ContinuousBernoulli"),
    ("Gamma", "ContinuousBernoulli"),
    ("LowRankMultivariateNormal", "LowRankMultivariateNormal"),
    ("MultivariateNormal", "LowRankMultivariateNormal"),
    ("LowRankMultivariateNormal", "MultivariateNormal"),
]


@pytest.mark.parametrize("p_name,q_name", KL_PAIRS)
def test_kl_divergence(p_name, q_name):
    pe, pt, pep, ptp = _pair(p_name)
    qe, qt, qep, qtp = _pair(q_name, perturb=True)
    te, terr = _try(lambda: TD.kl_divergence(pt, qt))
    ee, eerr = _try(lambda: ED.kl_divergence(pe, qe))
    assert (terr is None) == (eerr is None), (eerr, terr)
    if terr is not None:
        assert str(eerr) == str(terr)
        return
    assert_same(ee, te, atol=1e-8, rtol=1e-7)
    finite = torch.isfinite(te)
    if not bool(finite.any()):
        return
    ge = ember.autograd.grad(ember.where(ember.tensor(finite.numpy()), ee, 0.0).sum(), pep + qep,
                             allow_unused=True)
    gt = torch.autograd.grad(torch.where(finite, te, 0.0).sum(), ptp + qtp, allow_unused=True)
    for i, (a, b) in enumerate(zip(ge, gt)):
        if b is not None and a is not None:
            assert_same(a, b, atol=1e-8, rtol=1e-6, path=f"kl.grad[{i}]")
        else:
            assert (a is None or not a.abs().sum().item()) and (b is None or not b.abs().sum().item())


def test_kl_registry_dispatch_and_errors():
    _message(lambda: ED.kl_divergence(ED.Normal(0.0, 1.0), ED.Categorical(ember.ones(2))),
             lambda: TD.kl_divergence(TD.Normal(0.0, 1.0), TD.Categorical(torch.ones(2))),
             NotImplementedError)
    _message(lambda: ED.kl_divergence(ED.Normal(0.0, 1.0), ED.Bernoulli(0.3)),
             lambda: TD.kl_divergence(TD.Normal(0.0, 1.0), TD.Bernoulli(0.3)),
             NotImplementedError)

    class MyNormal(ED.Normal):
        pass

    assert float(ED.kl_divergence(MyNormal(0.0, 1.0), ED.Normal(1.0, 1.0))) == pytest.approx(0.5)

    @ED.register_kl(MyNormal, ED.Normal)
    def _mine(p, q):
        return ember.tensor(42.0)

    assert float(ED.kl_divergence(MyNormal(0.0, 1.0), ED.Normal(1.0, 1.0))) == 42.0
    del ED.kl._KL_REGISTRY[MyNormal, ED.Normal]
    ED.kl._KL_MEMOIZE.clear()
    assert "Normal` and :class:`~ember.distributions.Normal" in ED.kl_divergence.__doc__


def _message(fn_e, fn_t, exc=ValueError):
    with pytest.raises(exc) as te:
        fn_t()
    with pytest.raises(exc) as ee:
        fn_e()
    # (PyTorch's KL messages carry the indentation of a backslash-continued string literal)
    assert " ".join(str(ee.value).split()) == " ".join(str(te.value).split())


def test_validation_errors_match_torch():
    for D, lib in ((ED, ember), (TD, torch)):
        D.Distribution.set_default_validate_args(True)
    _message(lambda: ED.Normal(0.0, -1.0), lambda: TD.Normal(0.0, -1.0))
    _message(lambda: ED.Normal(ember.zeros(3), ember.tensor([1.0, 0.0, 2.0])),
             lambda: TD.Normal(torch.zeros(3), torch.tensor([1.0, 0.0, 2.0])))
    _message(lambda: ED.Bernoulli(probs=ember.tensor([0.2, 1.5])),
             lambda: TD.Bernoulli(probs=torch.tensor([0.2, 1.5])))
    _message(lambda: ED.Bernoulli(), lambda: TD.Bernoulli())
    _message(lambda: ED.Categorical(probs=ember.tensor(0.3)),
             lambda: TD.Categorical(probs=torch.tensor(0.3)))
    _message(lambda: ED.Categorical(probs=ember.tensor([0.3, -0.2, 0.9])),
             lambda: TD.Categorical(probs=torch.tensor([0.3, -0.2, 0.9])))
    _message(lambda: ED.Geometric(probs=ember.tensor([0.0, 0.5])),
             lambda: TD.Geometric(probs=torch.tensor([0.0, 0.5])))
    _message(lambda: ED.Uniform(ember.tensor([0.0, 2.0]), ember.tensor([1.0, 1.0])),
             lambda: TD.Uniform(torch.tensor([0.0, 2.0]), torch.tensor([1.0, 1.0])))
    _message(lambda: ED.MultivariateNormal(ember.zeros(2)),
             lambda: TD.MultivariateNormal(torch.zeros(2)))
    _message(lambda: ED.MultivariateNormal(ember.zeros(2), scale_tril=ember.tensor([[1.0, 1.0], [0.0, 1.0]])),
             lambda: TD.MultivariateNormal(torch.zeros(2), scale_tril=torch.tensor([[1.0, 1.0], [0.0, 1.0]])))
    _message(lambda: ED.Independent(ED.Normal(0.0, 1.0), 1),
             lambda: TD.Independent(TD.Normal(0.0, 1.0), 1))
    _message(lambda: ED.Multinomial(ember.tensor(3), probs=ember.tensor([0.5, 0.5])),
             lambda: TD.Multinomial(torch.tensor(3), probs=torch.tensor([0.5, 0.5])),
             NotImplementedError)
    # values outside the support, or of the wrong shape
    e, t = ED.Normal(ember.zeros(2, 3), 1.0), TD.Normal(torch.zeros(2, 3), 1.0)
    _message(lambda: e.log_prob(ember.zeros(2, 4)), lambda: t.log_prob(torch.zeros(2, 4)))
    _message(lambda: e.log_prob(0.5), lambda: t.log_prob(0.5))
    e, t = ED.Bernoulli(probs=ember.tensor([0.3])), TD.Bernoulli(probs=torch.tensor([0.3]))
    _message(lambda: e.log_prob(ember.tensor([0.5])), lambda: t.log_prob(torch.tensor([0.5])))
    e, t = ED.Dirichlet(ember.ones(3)), TD.Dirichlet(torch.ones(3))
    _message(lambda: e.log_prob(ember.tensor([0.5, 0.6, 0.1])),
             lambda: t.log_prob(torch.tensor([0.5, 0.6, 0.1])))
    e, t = ED.Gamma(1.0, 1.0), TD.Gamma(1.0, 1.0)
    _message(lambda: e.log_prob(ember.tensor(-1.0)), lambda: t.log_prob(torch.tensor(-1.0)))
    # validate_args=False turns all of it off
    ED.Normal(0.0, -1.0, validate_args=False)
    assert math.isnan(float(ED.Bernoulli(probs=ember.tensor(0.3), validate_args=False)
                            .log_prob(ember.tensor(0.5)).exp()) * 0) is False
    ED.Distribution.set_default_validate_args(False)
    try:
        ED.Normal(0.0, -1.0)
    finally:
        ED.Distribution.set_default_validate_args(True)


def test_shapes_expand_and_repr():
    for D, lib in ((ED, ember), (TD, torch)):
        d = D.Normal(lib.zeros(3), lib.ones(3))
        assert d.sample().shape == (3,) and d.sample((4, 2)).shape == (4, 2, 3)
        x = d.expand((5, 3))
        assert x.batch_shape == (5, 3) and x.sample((2,)).shape == (2, 5, 3)
        m = D.MultivariateNormal(lib.zeros(2, 3), lib.eye(3))
        assert m.expand((4, 2)).batch_shape == (4, 2)
        assert m.expand((4, 2)).covariance_matrix.shape == (4, 2, 3, 3)
    assert repr(ED.Normal(0.0, 1.0)) == repr(TD.Normal(0.0, 1.0))
    assert repr(ED.Normal(ember.zeros(2), 1.0)) == repr(TD.Normal(torch.zeros(2), 1.0))
    assert repr(ED.Independent(ED.Normal(ember.zeros(2), 1.0), 1)) == repr(
        TD.Independent(TD.Normal(torch.zeros(2), 1.0), 1))
    assert repr(ED.constraints.interval(0.0, 2.0)) == repr(TD.constraints.interval(0.0, 2.0))
    assert repr(ED.constraints.independent(ED.constraints.real, 1)) == repr(
        TD.constraints.independent(TD.constraints.real, 1))
    assert repr(ED.Categorical(probs=ember.ones(3))) == repr(TD.Categorical(probs=torch.ones(3)))
    for name in ("Bernoulli", "Categorical", "Binomial"):
        make, params, _, _ = CASES[name]
        ep, tp = build(params)
        assert_same(make(ED, *ep).enumerate_support(), make(TD, *tp).enumerate_support())
        assert_same(make(ED, *ep).enumerate_support(False), make(TD, *tp).enumerate_support(False))
    e, t = _pair("OneHotCategorical")[:2]
    assert_same(e.enumerate_support(), t.enumerate_support())


def test_lazy_probs_logits_and_perplexity():
    e = ED.Categorical(logits=ember.tensor([1.0, 2.0, 3.0]))
    t = TD.Categorical(logits=torch.tensor([1.0, 2.0, 3.0]))
    assert "probs" not in e.__dict__
    assert_same(e.probs, t.probs)
    assert "probs" in e.__dict__
    assert_same(e.perplexity(), t.perplexity())
    d = ED.Bernoulli(logits=ember.tensor([0.5], requires_grad=True))
    with ember.no_grad():
        p = d.probs
    assert p.requires_grad  # derived under enable_grad, like PyTorch's lazy_property


TRANSFORMS = [
    ("ExpTransform", lambda D: D.ExpTransform(), lambda: real(3, 4)),
    ("SigmoidTransform", lambda D: D.SigmoidTransform(), lambda: real(3, 4)),
    ("TanhTransform", lambda D: D.TanhTransform(), lambda: real(3, 4)),
    ("SoftplusTransform", lambda D: D.SoftplusTransform(), lambda: real(3, 4)),
    ("AffineTransform", lambda D: D.AffineTransform(1.5, -2.0), lambda: real(3, 4)),
    ("AffineTransformEvent", lambda D: D.AffineTransform(
        (ember if D is ED else torch).tensor([0.5, 1.0, 2.0, 3.0], dtype=(ember if D is ED else torch).float64),
        (ember if D is ED else torch).tensor([1.0, -2.0, 0.5, 3.0], dtype=(ember if D is ED else torch).float64),
        event_dim=1), lambda: real(3, 4)),
    ("PowerTransform", lambda D: D.PowerTransform((ember if D is ED else torch).tensor(2.5)),
     lambda: pos(3, 4)),
    ("StickBreakingTransform", lambda D: D.StickBreakingTransform(), lambda: real(3, 4)),
    ("LowerCholeskyTransform", lambda D: D.LowerCholeskyTransform(), lambda: real(2, 3, 3)),
    ("CorrCholeskyTransform", lambda D: D.CorrCholeskyTransform(), lambda: real(2, 6)),
    ("Compose", lambda D: D.ComposeTransform([D.AffineTransform(0.0, 2.0), D.SigmoidTransform(),
                                              D.AffineTransform(-1.0, 2.0)]), lambda: real(3, 4)),
    ("Independent", lambda D: D.IndependentTransform(D.ExpTransform(), 1), lambda: real(3, 4)),
    ("Reshape", lambda D: D.ReshapeTransform((4,), (2, 2)), lambda: real(3, 4)),
    ("Cat", lambda D: D.CatTransform([D.ExpTransform(), D.identity_transform], dim=1,
                                     lengths=[2, 2]), lambda: real(3, 4)),
    ("Stack", lambda D: D.StackTransform([D.ExpTransform(), D.SigmoidTransform(),
                                          D.TanhTransform()], dim=0), lambda: real(3, 4)),
    ("CDF", lambda D: D.CumulativeDistributionTransform(D.Normal(0.0, 1.0)), lambda: real(3, 4)),
    ("Inverse", lambda D: D.ExpTransform().inv, lambda: pos(3, 4)),
    ("SoftmaxTransform", lambda D: D.SoftmaxTransform(), lambda: real(3, 4)),
]


@pytest.mark.parametrize("name,make,data", TRANSFORMS, ids=[t[0] for t in TRANSFORMS])
def test_transforms(name, make, data):
    x = data()
    (ex,), (tx,) = build([x])
    e, t = make(ED), make(TD)
    ey, ty = e(ex), t(tx)
    assert_same(ey, ty, atol=1e-10, rtol=1e-9, path="forward")
    assert_same(e.inv(ey), t.inv(ty), atol=1e-8, rtol=1e-7, path="inverse")
    assert e.bijective == t.bijective
    assert e.domain.event_dim == t.domain.event_dim
    assert e.codomain.event_dim == t.codomain.event_dim
    assert tuple(e.forward_shape(ex.shape)) == tuple(t.forward_shape(tx.shape))
    assert tuple(e.inverse_shape(ey.shape)) == tuple(t.inverse_shape(ty.shape))
    assert bool(e.codomain.check(ey).all()) == bool(t.codomain.check(ty).all())
    ldj_t, terr = _try(lambda: t.log_abs_det_jacobian(tx, ty))
    ldj_e, eerr = _try(lambda: e.log_abs_det_jacobian(ex, ey))
    assert (terr is None) == (eerr is None)
    if ldj_t is not None:
        assert_same(ldj_e, ldj_t, atol=1e-9, rtol=1e-8, path="log_abs_det_jacobian")
        (ge,) = ember.autograd.grad(ldj_e.sum() + ey.sum(), [ex])
        (gt,) = torch.autograd.grad(ldj_t.sum() + ty.sum(), [tx])
        assert_same(ge, gt, atol=1e-8, rtol=1e-7, path="grad")


def test_transform_cache_and_equality():
    t = ED.ExpTransform(cache_size=1)
    x = ember.randn(3)
    y = t(x)
    assert t.inv(y) is x and t(x) is y
    assert t.inv.inv is t
    assert ED.ExpTransform() == ED.ExpTransform() and ED.AffineTransform(1, 2) == ED.AffineTransform(1, 2)
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        ED.ExpTransform(cache_size=2)
    assert repr(ED.ComposeTransform([ED.ExpTransform(), ED.ExpTransform().inv])) == repr(
        TD.ComposeTransform([TD.ExpTransform(), TD.ExpTransform().inv]))


@pytest.mark.parametrize("constraint", [
    "real", "positive", "nonnegative", "unit_interval", "simplex", "lower_cholesky",
    "positive_definite", "corr_cholesky", "real_vector", "greater_than", "less_than", "interval"])
def test_biject_to_and_transform_to(constraint):
    def get(C):
        return {"greater_than": lambda: C.greater_than(1.5), "less_than": lambda: C.less_than(-1.0),
                "interval": lambda: C.interval(-2.0, 3.0)}.get(constraint, lambda: getattr(C, constraint))()
    x = real(2, 6) if constraint == "corr_cholesky" else real(2, 3, 3) if constraint in (
        "lower_cholesky", "positive_definite") else real(2, 3)
    for registry in ("biject_to", "transform_to"):
        t_fn = getattr(TD, registry)
        try:
            tt = t_fn(get(TD.constraints))
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                getattr(ED, registry)(get(ED.constraints))
            continue
        et = getattr(ED, registry)(get(ED.constraints))
        assert type(et).__name__ == type(tt).__name__
        ey, ty = et(ember.tensor(x)), tt(torch.tensor(x))
        assert_same(ey, ty, atol=1e-10, rtol=1e-9)
        assert bool(get(ED.constraints).check(ey).all())


def test_constraints_check_against_torch():
    vals = np.array([[-1.0, 0.0, 0.5], [1.0, 2.0, np.nan]])
    for name in ("real", "positive", "nonnegative", "unit_interval", "boolean",
                 "nonnegative_integer", "positive_integer", "simplex", "one_hot", "real_vector"):
        assert_same(getattr(ED.constraints, name).check(ember.tensor(vals)),
                    getattr(TD.constraints, name).check(torch.tensor(vals)), path=name)
    for e, t in ((ED.constraints.integer_interval(0, 1), TD.constraints.integer_interval(0, 1)),
                 (ED.constraints.half_open_interval(0.0, 1.0), TD.constraints.half_open_interval(0.0, 1.0)),
                 (ED.constraints.greater_than_eq(0.5), TD.constraints.greater_than_eq(0.5)),
                 (ED.constraints.multinomial(2), TD.constraints.multinomial(2))):
        assert_same(e.check(ember.tensor(vals)), t.check(torch.tensor(vals)))
    mats = np.stack([spd(3), -spd(3), tril(3), np.eye(3)])
    for name in ("lower_triangular", "lower_cholesky", "square", "symmetric",
                 "positive_definite", "positive_semidefinite"):
        assert_same(getattr(ED.constraints, name).check(ember.tensor(mats)),
                    getattr(TD.constraints, name).check(torch.tensor(mats)), path=name)
    assert ED.constraints.is_dependent(ED.Uniform.arg_constraints) is False
    assert ED.constraints.is_dependent(ED.Categorical.support)
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        ED.constraints.dependent.check(ember.zeros(1))


def test_vae_style_training_step():
    """An rsample-based loss trains: the reparameterised ELBO gradient matches torch's."""
    w = R.normal(size=(3, 4))
    e_w = ember.tensor(w, requires_grad=True)
    t_w = torch.tensor(w, requires_grad=True)
    x = R.normal(size=(5, 3))
    losses = []
    for lib, D, W in ((ember, ED, e_w), (torch, TD, t_w)):
        lib.manual_seed(3)
        h = lib.tensor(x) @ W
        q = D.Normal(h[:, :2], lib.nn.functional.softplus(h[:, 2:]))
        z = q.rsample()
        prior = D.Normal(lib.zeros_like(z), lib.ones_like(z))
        loss = (D.kl_divergence(q, prior).sum() - D.Independent(prior, 1).log_prob(z).sum())
        loss.backward()
        losses.append(loss)
    assert_same(losses[0], losses[1], atol=1e-10, rtol=1e-10)
    assert_same(e_w.grad, t_w.grad, atol=1e-10, rtol=1e-9)


@pytest.mark.parametrize("make", [
    lambda D, lib: D.Normal(0.0, 2.0), lambda D, lib: D.Uniform(-1.0, 3.0),
    lambda D, lib: D.Exponential(lib.tensor([0.5, 2.0])), lambda D, lib: D.Laplace(1.0, 0.5),
    lambda D, lib: D.Cauchy(0.0, 1.0), lambda D, lib: D.Geometric(lib.tensor([0.3, 0.7])),
    lambda D, lib: D.Bernoulli(logits=lib.tensor([0.3, -0.7])),
    lambda D, lib: D.RelaxedBernoulli(lib.tensor(0.5), probs=lib.tensor([0.3, 0.7])),
    lambda D, lib: D.Gumbel(lib.tensor([0.3, 0.7]), 2.0),
])
def test_float32_and_scalar_samples_equal_torch(make):
    ember.manual_seed(11)
    torch.manual_seed(11)
    e, t = make(ED, ember).sample((4, 3)), make(TD, torch).sample((4, 3))
    # the same draws; float32 log/exp of NumPy and of PyTorch's vector library may differ
    # in the last bit after the transforms
    assert_same(e, t, atol=0, rtol=1e-6)


@pytest.mark.parametrize("name", sorted(CASES))
def test_expand_matches_torch(name):
    make, params, value, _ = CASES[name]
    ep, tp = build(params, requires_grad=False)
    e, t = make(ED, *ep), make(TD, *tp)
    shape = (2,) + tuple(t.batch_shape)
    ee, te = e.expand(shape), t.expand(shape)
    assert type(ee) is type(e) and ee.batch_shape == te.batch_shape
    assert ee.event_shape == te.event_shape
    if value is None:
        value = params[0] + params[1] * unit(4, 3)
    v = value[:1]  # broadcasts against the new leading dim
    assert_same(ee.log_prob(ember.tensor(v)), te.log_prob(torch.tensor(v)), atol=1e-8, rtol=1e-7)
    assert ee.sample((3,)).shape == te.sample((3,)).shape


def test_lowrank_multivariate_normal_matrices_as_torch():
    ep, tp = build([real(2, 3), real(3, 2), pos(3)])
    e, t = ED.LowRankMultivariateNormal(*ep), TD.LowRankMultivariateNormal(*tp)
    for name in ("covariance_matrix", "precision_matrix", "scale_tril"):
        assert_same(getattr(e, name), getattr(t, name), atol=1e-10, rtol=1e-9, path=name)
    ge = ember.autograd.grad(e.precision_matrix.sum() + e.scale_tril.sum(), ep[1:])
    gt = torch.autograd.grad(t.precision_matrix.sum() + t.scale_tril.sum(), tp[1:])
    for a, b in zip(ge, gt):
        assert_same(a, b, atol=1e-9, rtol=1e-8)
    for m, D in ((ember, ED), (torch, TD)):
        with pytest.raises(ValueError, match="cov_factor must be a batch of matrices"):
            D.LowRankMultivariateNormal(m.zeros(3), m.ones(2, 1), m.ones(3))


def test_generalized_pareto_as_torch():
    """In float32: PyTorch's log_prob compares the concentration with a float32 zero, which
    raises for float64 parameters (ember's compares with a zero of the parameters' dtype)."""
    params = [real(3), pos(3), np.array([-0.2, 0.0, 0.3])]
    e_params = [ember.tensor(a, dtype=ember.float32, requires_grad=True) for a in params]
    t_params = [torch.tensor(a, dtype=torch.float32, requires_grad=True) for a in params]
    e, t = ED.GeneralizedPareto(*e_params), TD.GeneralizedPareto(*t_params)
    value = params[0] + params[1] * unit(4, 3)
    ev, tv = ember.tensor(value, dtype=ember.float32), torch.tensor(value, dtype=torch.float32)
    probs = unit(4, 3)
    outputs = {
        "log_prob": lambda d, v: d.log_prob(v), "cdf": lambda d, v: d.cdf(v),
        "icdf": lambda d, v: d.icdf(v.new_tensor(probs)), "mean": lambda d, v: d.mean,
        "variance": lambda d, v: d.variance, "entropy": lambda d, v: d.entropy(),
        "support_upper": lambda d, v: d.support.upper_bound,
    }
    for name, fn in outputs.items():
        assert_same(fn(e, ev), fn(t, tv), atol=1e-5, rtol=1e-5, path=name)
    loss_e = e.log_prob(ev).sum() + e.icdf(ev.new_tensor(probs)).sum()
    loss_t = t.log_prob(tv).sum() + t.icdf(tv.new_tensor(probs)).sum()
    for a, b in zip(ember.autograd.grad(loss_e, e_params), torch.autograd.grad(loss_t, t_params)):
        assert_same(a, b, atol=1e-4, rtol=1e-4)
    ember.manual_seed(3)
    torch.manual_seed(3)
    assert_same(e.rsample((5,)).detach(), t.rsample((5,)).detach(), atol=1e-5, rtol=1e-5)


def _corr_cholesky(n, batch):
    a = R.normal(size=(batch, n, n))
    cov = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    d = np.sqrt(np.diagonal(cov, axis1=-2, axis2=-1))
    return np.linalg.cholesky(cov / d[..., :, None] / d[..., None, :])


def test_lkj_cholesky_as_torch():
    value = _corr_cholesky(3, 4)
    ep, tp = build([pos(2)])
    e, t = ED.LKJCholesky(3, ep[0]), TD.LKJCholesky(3, tp[0])
    ev, tv = ember.tensor(value[:, None]), torch.tensor(value[:, None])
    assert e.batch_shape == t.batch_shape and e.event_shape == t.event_shape
    assert_same(e.log_prob(ev), t.log_prob(tv), atol=1e-10, rtol=1e-9)
    assert_same(ember.autograd.grad(e.log_prob(ev).sum(), ep)[0],
                torch.autograd.grad(t.log_prob(tv).sum(), tp)[0], atol=1e-10, rtol=1e-9)
    ember.manual_seed(0)
    draws = e.sample((500,))
    assert draws.shape == t.sample((500,)).shape and not draws.requires_grad
    assert bool(ED.constraints.corr_cholesky.check(draws).all())
    # E[C_01] = 0, and the concentration spreads the off-diagonal correlations as in torch
    corr = (draws @ draws.mT)[..., 1, 0].numpy()
    theirs = (lambda s: (s @ s.mT)[..., 1, 0].numpy())(t.sample((500,)))
    assert abs(corr.mean()) < 0.1 and abs(corr.std() - theirs.std()) < 0.1
    with pytest.raises(ValueError, match="greater than or equal to 2"):
        ED.LKJCholesky(1)


@pytest.mark.parametrize("param", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_wishart_as_torch(param):
    matrix = {"covariance_matrix": spd(3), "precision_matrix": spd(3), "scale_tril": tril(3)}
    ep, tp = build([pos(2) + 3, matrix[param]])
    e, t = ED.Wishart(ep[0], **{param: ep[1]}), TD.Wishart(tp[0], **{param: tp[1]})
    assert e.batch_shape == t.batch_shape and e.event_shape == t.event_shape
    value = np.stack([spd(3) for _ in range(4)])[:, None]
    ev, tv = ember.tensor(value), torch.tensor(value)
    for name in ("mean", "mode", "variance", "covariance_matrix", "precision_matrix",
                 "scale_tril"):
        assert_same(getattr(e, name), getattr(t, name), atol=1e-9, rtol=1e-8, path=name)
    assert_same(e.log_prob(ev), t.log_prob(tv), atol=1e-9, rtol=1e-8)
    assert_same(e.entropy(), t.entropy(), atol=1e-9, rtol=1e-8)
    loss_e, loss_t = e.log_prob(ev).sum() + e.entropy().sum(), t.log_prob(tv).sum() + \
        t.entropy().sum()
    for a, b in zip(ember.autograd.grad(loss_e, ep), torch.autograd.grad(loss_t, tp)):
        assert_same(a, b, atol=1e-8, rtol=1e-7)
    ember.manual_seed(0)
    draws = e.rsample((2000,))
    assert draws.shape == (2000, 2, 3, 3) and bool(ED.constraints.positive_definite.check(
        draws).all())
    # the sample mean approaches df * Sigma
    np.testing.assert_allclose(draws.mean(0).detach().numpy(), e.mean.detach().numpy(),
                               rtol=0.15, atol=0.15 * np.abs(e.mean.detach().numpy()).max())
    with pytest.raises(ValueError, match="expected to be greater than ndim - 1"):
        ED.Wishart(ember.tensor(1.0), covariance_matrix=ember.eye(3))


def test_wishart_samples_equal_torchs_with_the_same_seed():
    """PyTorch 2.13's Wishart.rsample tests its first draw without negating the check, so a
    valid draw is redrawn once with a "Singular sample detected." warning; ember follows it,
    so the same seed gives the same draws (and the generator ends in the same state)."""
    import warnings
    outs = []
    for lib, dist in ((ember, ED), (torch, TD)):
        lib.manual_seed(3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            s = dist.Wishart(lib.tensor([4.0, 5.0]), lib.eye(2)).sample((3,))
        outs.append((s.numpy(), lib.rand(2).numpy(), [str(w.message) for w in caught]))
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(outs[0][1], outs[1][1])
    assert outs[0][2] == outs[1][2] == ["Singular sample detected."]
