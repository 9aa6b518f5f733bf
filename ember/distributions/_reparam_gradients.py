"""The implicit reparameterisation gradients of Gamma and Dirichlet samples.

A Gamma(alpha) draw x has no closed-form map from parameter-free noise, but it still has a
pathwise derivative: hold the CDF fixed at the drawn value, F(x; alpha) = u, and
differentiate,

    dx/dalpha = -(dF/dalpha)(x; alpha) / p(x; alpha)

(Figurnov et al. 2018, "Implicit Reparameterization Gradients"). dF/dalpha has no closed
form either, so PyTorch evaluates it with approximations fitted by region: a Taylor series
for small x, Rice's saddle-point expansion for large alpha, and a bivariate rational fit
elsewhere (ATen's `_standard_gamma_grad`). A Dirichlet draw is a normalised vector of Gamma
draws; its gradient is built from the Beta(alpha, total - alpha) marginals
(`_dirichlet_grad`), again by region.

Here the same approximations are written as elementwise ember ops: every region's formula
is evaluated on the whole tensor in float64 (PyTorch's accumulation type on CPU) and
`where` picks each element's region. These run in backward only, outside the graph (the
gradients are not themselves differentiable, as in PyTorch).
"""
import functools

import numpy as np

import ember


def _select(cases, default):
    """cases: (condition, value) pairs, first match wins; `default` elsewhere."""
    result = default
    for condition, value in reversed(cases):
        result = ember.where(condition, value, result)
    return result


def _quiet(fn):
    """Regions are evaluated everywhere, also where their formula overflows or divides by
    zero; `where` then discards those values, so NumPy's warnings about them are noise."""
    @functools.wraps(fn)
    def wrapper(*args):
        with np.errstate(all="ignore"):
            return fn(*args)
    return wrapper


def _zero_nan(t):
    return ember.where(ember.isnan(t), ember.zeros_like(t), t)


@_quiet
def standard_gamma_grad(alpha, x):
    """d x / d alpha for x ~ Gamma(alpha, 1), elementwise."""
    dtype = x.dtype
    alpha, x = alpha.to(ember.float64), x.to(ember.float64)

    # small x: Taylor series of the lower incomplete gamma function and its alpha-derivative
    numer = ember.ones_like(x)
    denom = alpha.clone()
    series1 = numer / denom
    series2 = numer / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1
        series1 = series1 + numer / denom
        series2 = series2 + numer / (denom * denom)
    pow_x_alpha = x.pow(alpha)
    gamma_pdf = x.pow(alpha - 1) * ember.exp(-x)
    gamma_cdf = pow_x_alpha * series1
    gamma_cdf_alpha = (x.log() - ember.digamma(alpha)) * gamma_cdf - pow_x_alpha * series2
    taylor = _zero_nan(-gamma_cdf_alpha / gamma_pdf)

    # large alpha: Rice's saddle-point expansion, with its own form near x = alpha
    near = ((1 + 24 * alpha * (1 + 12 * alpha))
            * (1440 * alpha * alpha + 6 * x * (53 - 120 * x) - 65 * x * x / alpha
               + alpha * (107 + 3600 * x))
            / (1244160 * alpha ** 4))
    root = ember.sqrt(8 * alpha)
    term2 = root / (alpha - x)
    term3 = (x - alpha - alpha * ember.log(x / alpha)).pow(-1.5)
    term23 = ember.where(x < alpha, term2 - term3, term2 + term3)
    term1 = (ember.log(x / alpha) * term23
             - ember.sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x)))
    stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
    far = -stirling * x * term1 / root
    saddle = ember.where((0.9 * alpha <= x) & (x <= 1.1 * alpha), near, far)

    # elsewhere: exp(p(u, v) / q(u, v)) with u = log(x / alpha), v = log(alpha)
    u = ember.log(x / alpha)
    v = ember.log(alpha)
    rows = ((0.16009398, -0.094634809, 0.025146376, -0.0030648343,
             1, 0.32668115, 0.10406089, 0.0014179084),
            (0.53487893, 0.1298071, 0.065735949, -0.0015649758,
             0.16639465, 0.020070113, -0.0035938915, -0.00058392623),
            (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
             0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07))
    coef = [rows[0][i] + u * (rows[1][i] + u * rows[2][i]) for i in range(8)]
    p = coef[0] + v * (coef[1] + v * (coef[2] + v * coef[3]))
    q = coef[4] + v * (coef[5] + v * (coef[6] + v * coef[7]))
    rational = ember.exp(p / q)

    result = _select([(x < 0.8, taylor), (alpha > 8.0, saddle)], rational)
    return result.to(dtype)


def _beta_grad_alpha_small(x, alpha, beta):
    # x near 0: a Taylor expansion of the Beta CDF's alpha-derivative
    factor = ember.digamma(alpha) - ember.digamma(alpha + beta) - ember.log(x)
    numer = ember.ones_like(x)
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer = numer * ((i - beta) * x / i)
        denom = alpha + i
        series = series + numer / denom * (factor + 1 / denom)
    return _zero_nan(x * (1 - x).pow(-beta) * series)


def _beta_grad_beta_small(x, alpha, beta):
    # x near 0: the same expansion for the derivative in beta
    factor = ember.digamma(alpha + beta) - ember.digamma(beta)
    numer = ember.ones_like(x)
    betas = ember.ones_like(x)
    dbetas = ember.zeros_like(x)
    series = factor / alpha
    for i in range(1, 9):
        numer = numer * (-x / i)
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series = series + numer / (alpha + i) * (dbetas + factor * betas)
    return _zero_nan(-(1 - x).pow(1 - beta) * series)


def _beta_grad_alpha_mid(x, alpha, beta):
    # alpha and beta both large: Rice's saddle point, with a polynomial near the mean
    total = alpha + beta
    mean = alpha / total
    std = ember.sqrt(alpha * beta / (total + 1)) / total
    b2 = beta * beta
    poly = (47 * x * b2 * b2 + alpha * (
        (43 + 20 * (16 + 27 * beta) * x) * b2 * beta + alpha * (
            3 * (59 + 180 * beta - 90 * x) * b2 + alpha * (
                (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (
                    8 * (1 - x) * (135 * beta - 11))))))
    prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
    prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total)
    near = prefactor_num / (1 - x) * poly / prefactor_den

    prefactor = -x / ember.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha))
                * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    term1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * b2
    axbx = alpha * (x - 1) + beta * x
    term1_den = ember.sqrt(2 * alpha / beta) * total.pow(1.5) * axbx * axbx
    term1 = term1_num / term1_den
    term2 = 0.5 * ember.log(alpha / (total * x))
    term3 = ember.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    term4 = (beta * ember.log(beta / (total * (1 - x)))
             + alpha * ember.log(alpha / (total * x))).pow(-1.5)
    term1234 = term1 + term2 * (term3 + ember.where(x < mean, term4, -term4))
    far = stirling * prefactor * term1234
    return ember.where((mean - 0.1 * std <= x) & (x <= mean + 0.1 * std), near, far)


# the rational correction's coefficients: [numerator, denominator][power of u][power of a]
# each a cubic in b
_DIRICHLET_COEFS = (
    (((1.003668233, -0.01061107488, -0.0657888334, 0.01201642863),
      (0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033),
      (-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013)),
     ((0.221950385, -0.3187676331, 0.01799915743, 0.01074823814),
      (-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057),
      (0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05)),
     ((-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565),
      (0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181),
      (0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05))),
    (((1, -0.02924021934, -0.04438342661, 0.007285809825),
      (0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521),
      (-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149)),
     ((0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273),
      (0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956),
      (-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05)),
     ((0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05),
      (0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05),
      (-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06))),
)


@_quiet
def dirichlet_grad(x, alpha, total):
    """d x_i / d alpha_i for the Beta(alpha, total - alpha) marginal of a Dirichlet draw,
    divided by (1 - x), elementwise (PyTorch's `_dirichlet_grad`)."""
    dtype = x.dtype
    x, alpha, total = x.to(ember.float64), alpha.to(ember.float64), total.to(ember.float64)
    beta = total - alpha
    boundary = total * x * (1 - x)

    u = ember.log(x)
    a = ember.log(alpha) - u
    b = ember.log(total) - a
    powers_u = (1, u, u * u)
    powers_a = (1, a, a * a)
    pq = []
    for coefs in _DIRICHLET_COEFS:
        acc = 0
        for i in range(3):
            for j in range(3):
                c = coefs[i][j]
                acc = acc + powers_u[i] * powers_a[j] * (c[0] + b * (c[1] + b * (c[2] + b * c[3])))
        pq.append(acc)
    approx = x * (ember.digamma(total) - ember.digamma(alpha)) / beta
    rational = pq[0] / pq[1] * approx

    result = _select([
        ((x <= 0.5) & (boundary < 2.5), _beta_grad_alpha_small(x, alpha, beta)),
        ((x >= 0.5) & (boundary < 0.75), -_beta_grad_beta_small(1 - x, beta, alpha)),
        ((alpha > 6) & (beta > 6), _beta_grad_alpha_mid(x, alpha, beta)),
    ], rational)
    return result.to(dtype)
