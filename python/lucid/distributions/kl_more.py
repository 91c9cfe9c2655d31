"""The rest of torch.distributions.kl's registry: the closed forms between different
families (and the same-family pairs kl.py does not hold), infinite where p's support is
not inside q's, and the exponential families' Bregman divergence for any other pair of
one family. As torch writes them; registered into kl.py's table when imported."""

import math

from .bernoulli import Bernoulli
from .binomial import Binomial
from .distribution import _lucid
from .exp_family import ContinuousBernoulli, ExponentialFamily
from .exponential import Exponential, Laplace, Poisson
from .gamma import Beta, Gamma
from .half_line import Pareto
from .kl import _kl_categorical_categorical, _kl_normal_normal, kl_divergence, register_kl
from .lowrank_multivariate_normal import (LowRankMultivariateNormal, _lowrank_logdet, _lowrank_mahalanobis,
                                          _woodbury_factor)
from .more import Cauchy, Geometric, Gumbel, HalfNormal, OneHotCategorical
from .multivariate_normal import MultivariateNormal, _mahalanobis
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import _sum_rightmost
from .uniform import Uniform

_EULER = 0.57721566490153286060


def _infinite_like(t):
    return _lucid().full_like(t, math.inf)


def _x_log_x(t):
    return _lucid().xlogy(t, t)  # (0 at 0)


def _trace_xxt(m):
    """trace(M M^T) over trailing batch dims."""
    return m.pow(2).sum((-2, -1))


def _where_inf(condition, result):
    return _lucid().where(condition, math.inf, result)


# ---- one family ----------------------------------------------------------------------------

@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    lucid = _lucid()
    return (p.mean * (p.logits - q.logits) + p._cont_bern_log_norm() + lucid.log1p(-p.probs)
            - q._cont_bern_log_norm() - lucid.log1p(-q.probs))


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """The Bregman divergence of the log normalizer, by autograd (one family only)."""
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential families cannot be "
                                  "computed using Bregman divergences")
    lucid = _lucid()
    p_params = [n.detach().requires_grad_() for n in p._natural_params]
    q_params = q._natural_params
    log_normalizer = p._log_normalizer(*p_params)
    gradients = lucid.autograd.grad(log_normalizer.sum(), p_params, create_graph=True)
    result = q._log_normalizer(*q_params) - log_normalizer
    for pn, qn, g in zip(p_params, q_params, gradients):
        result = result - _sum_rightmost((qn - pn) * g, len(q.event_shape))
    return result


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1, ct2, ct3 = p.scale / q.scale, q.loc / q.scale, p.loc / q.scale
    t3 = _lucid().exp(ct2 + (1 + ct1).lgamma() - ct3)
    return -ct1.log() - ct2 + ct3 + ct1 * _EULER + t3 - (1 + _EULER)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - _lucid().log1p(-q.probs) / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * (p.scale / q.scale).log() - alpha_ratio.log() + alpha_ratio - 1
    return _where_inf(p.support.lower_bound < q.support.lower_bound, result)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms or p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    return ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log() - (4 * p.scale * q.scale).log()


def _check_events(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two (Low Rank) Multivariate Normals with different event shapes "
                         "cannot be computed")


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p, q):
    _check_events(p, q)
    qW, qD, pW, pD = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, p._unbroadcasted_cov_factor, \
        p._unbroadcasted_cov_diag
    term1 = _lowrank_logdet(qD, q._capacitance_tril) - _lowrank_logdet(pD, p._capacitance_tril)
    term3 = _lowrank_mahalanobis(qW, qD, q.loc - p.loc, q._capacitance_tril)
    A = _woodbury_factor(q)
    term2 = ((pD / qD).sum(-1) + _trace_xxt(pW * qD.rsqrt().unsqueeze(-1)) - _trace_xxt(A * pD.sqrt().unsqueeze(-2))
             - _trace_xxt(A @ pW))
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrank(p, q):
    _check_events(p, q)
    qW, qD, pL = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, p._unbroadcasted_scale_tril
    term1 = _lowrank_logdet(qD, q._capacitance_tril) - 2 * pL.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    term3 = _lowrank_mahalanobis(qW, qD, q.loc - p.loc, q._capacitance_tril)
    A = _woodbury_factor(q)
    term2 = _trace_xxt(pL * qD.rsqrt().unsqueeze(-1)) - _trace_xxt(A @ pL)
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_multivariatenormal(p, q):
    lucid = _lucid()
    _check_events(p, q)
    qL, pW, pD = q._unbroadcasted_scale_tril, p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    term1 = 2 * qL.diagonal(dim1=-2, dim2=-1).log().sum(-1) - _lowrank_logdet(pD, p._capacitance_tril)
    term3 = _mahalanobis(qL, q.loc - p.loc)
    n = p.event_shape[0]
    batch = lucid.broadcast_shapes(tuple(qL.shape[:-2]), tuple(pW.shape[:-2]))
    qL = qL.expand(batch + (n, n))
    solve = lucid.linalg.solve_triangular
    term2 = (_trace_xxt(solve(qL, pW.expand(batch + (n, pW.shape[-1])), upper=False))
             + _trace_xxt(solve(qL, lucid.diag_embed(pD.sqrt()).expand(batch + (n, n)), upper=False)))
    return 0.5 * (term1 + term2 + term3 - n)


# ---- across families -----------------------------------------------------------------------

@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Beta, ContinuousBernoulli)
@register_kl(Uniform, ContinuousBernoulli)
def _kl_to_continuous_bernoulli(p, q):
    result = -p.entropy() - p.mean * q.logits - _lucid().log1p(-q.probs) - q._cont_bern_log_norm()
    if isinstance(p, Uniform):  # (torch's: infinite unless [low, high] is strictly inside (0, 1))
        return _where_inf((p.high >= q.support.upper_bound) | (p.low <= q.support.lower_bound), result)
    return result


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * (p.concentration1 / (p.concentration1 + p.concentration0))


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    a, b = p.concentration1, p.concentration0
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (q.concentration - 1) * (a.digamma() - (a + b).digamma())
    return -p.entropy() + t2 - t3 + q.rate * a / (a + b)


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    a, b = p.concentration1, p.concentration0
    mean = a / (a + b)
    var_normal = q.scale.pow(2)
    t2 = 0.5 * (var_normal * 2 * math.pi).log()
    t3 = (mean * (1 - mean) / (a + b + 1) + mean.pow(2)) * 0.5
    return -p.entropy() + t2 + (t3 - q.loc * mean + q.loc.pow(2) * 0.5) / var_normal


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return _where_inf((q.low > p.support.lower_bound) | (q.high < p.support.upper_bound), result)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - _lucid().log(q.rate) + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    lucid = _lucid()
    t2 = 0.5 * (math.log(2.0 * math.pi) + lucid.square(q.loc / q.scale)) + lucid.log(q.scale)
    t3 = (p.variance + lucid.square(p.mean) - 2.0 * q.loc * p.mean) / (2.0 * lucid.square(q.scale))
    return -p.entropy() + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return _where_inf((q.low >= p.support.lower_bound) | (q.high <= p.support.upper_bound), result)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    return (-q.concentration * _lucid().log(ratio) + ratio + q.concentration.lgamma() + q.concentration * _EULER
            - (1 + _EULER))


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    product, loc_ratio = p.rate * q.scale, q.loc / q.scale
    t2 = _lucid().exp(loc_ratio) * product / (product + 1)
    return product.log() - 1 - loc_ratio + t2 + product.reciprocal()


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    var_normal, rate_sqr = q.scale.pow(2), p.rate.pow(2)
    t1 = 0.5 * _lucid().log(rate_sqr * var_normal * 2 * math.pi)
    return t1 - 1 + (rate_sqr.reciprocal() - q.loc / p.rate + q.loc.pow(2) * 0.5) / var_normal


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    c = p.concentration
    product, loc_ratio = p.rate * q.scale, q.loc / q.scale
    t1 = (c - 1) * c.digamma() - c.lgamma() - c
    t2 = product.log() + c / product
    t3 = _lucid().exp(loc_ratio) * (1 + product.reciprocal()).pow(-c) - loc_ratio
    return t1 + t2 + t3


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    c = p.concentration
    var_normal, rate_sqr = q.scale.pow(2), p.rate.pow(2)
    t1 = 0.5 * _lucid().log(rate_sqr * var_normal * 2 * math.pi) - c - c.lgamma()
    t2 = 0.5 * (c.pow(2) + c) / rate_sqr
    return t1 + (c - 1) * c.digamma() + (t2 - q.loc * c / p.rate + 0.5 * q.loc.pow(2)) / var_normal


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    ratio = p.scale / q.scale
    t1 = (ratio / math.sqrt(2 * math.pi)).log()
    t2 = (math.pi * ratio * 0.5).pow(2) / 3
    t3 = ((p.loc + p.scale * _EULER - q.loc) / q.scale).pow(2) * 0.5
    return -t1 + t2 + t3 - (_EULER + 1)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    var_normal = q.scale.pow(2)
    ratio = p.scale.pow(2) / var_normal
    t1 = 0.5 * _lucid().log(2 * ratio / math.pi)
    return -t1 + ratio + (0.5 * p.loc.pow(2) - p.loc * q.loc + 0.5 * q.loc.pow(2)) / var_normal - 1


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    mean_ratio, var_ratio, loc_ratio = p.loc / q.scale, (p.scale / q.scale).pow(2), q.loc / q.scale
    t3 = _lucid().exp(-mean_ratio + 0.5 * var_ratio + loc_ratio)
    return -var_ratio.log() * 0.5 + mean_ratio - loc_ratio + t3 - (0.5 * (1 + math.log(2 * math.pi)))


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    lucid = _lucid()
    diff = p.loc - q.loc
    ratio = diff / p.scale
    t2 = math.sqrt(2 / math.pi) * p.scale * lucid.exp(-0.5 * ratio.pow(2))
    t3 = diff * lucid.erf(math.sqrt(0.5) * ratio)
    return -lucid.log(p.scale / q.scale) + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    product = p.scale * q.rate
    result = (p.alpha / product).log() - p.alpha.reciprocal() + p.alpha * product / (p.alpha - 1) - 1
    return _where_inf(p.alpha <= 1, result)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    common = p.scale.log() + p.alpha.reciprocal()
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    result = p.alpha.log() - common + t2 + (1 - q.concentration) * common + t4 - 1
    return _where_inf(p.alpha <= 1, result)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    var_normal = 2 * q.scale.pow(2)
    common = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t3 = p.alpha * common.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * common - q.loc).pow(2)
    return _where_inf(p.alpha <= 2, t1 - p.alpha.reciprocal() + (t3 + t4) / var_normal - 1)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    width = p.high - p.low
    t2 = (q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    t3 = (q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + width) / width
    t4 = q.concentration1.lgamma() + q.concentration0.lgamma() - (q.concentration1 + q.concentration0).lgamma()
    result = t3 + t4 - width.log() - t2
    return _where_inf((p.high > q.support.upper_bound) | (p.low < q.support.lower_bound), result)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return _where_inf(p.low < q.support.lower_bound, result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    width = p.high - p.low
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    result = -width.log() + t2 + t3 + q.rate * (p.high + p.low) / 2
    return _where_inf(p.low < q.support.lower_bound, result)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    lucid = _lucid()
    common = q.scale / (p.high - p.low)
    high, low = (p.high - q.loc) / q.scale, (p.low - q.loc) / q.scale
    return common.log() + 0.5 * (high + low) - common * (lucid.exp(-high) - lucid.exp(-low))


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    width = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / width).log()
    return t1 + 0.5 * (width.pow(2) / 12 + ((p.high + p.low - 2 * q.loc) / 2).pow(2)) / q.scale.pow(2)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    width = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * width).log()
    t2 = (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    return _where_inf(p.low < q.support.lower_bound, t2 * (q.alpha + 1) - t1)


# ---- supports not contained: infinite ------------------------------------------------------

def _register_infinite(p_type, q_types, parameter):
    def infinite(p, q):
        return _infinite_like(getattr(p, parameter))
    for q_type in q_types:
        register_kl(p_type, q_type)(infinite)


_register_infinite(Beta, (Pareto,), "concentration1")
_register_infinite(ContinuousBernoulli, (Pareto,), "probs")
_register_infinite(Exponential, (Beta, ContinuousBernoulli, Pareto, Uniform), "rate")
_register_infinite(Gamma, (Beta, ContinuousBernoulli, Pareto, Uniform), "concentration")
_register_infinite(Gumbel, (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform), "loc")
_register_infinite(Laplace, (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform), "loc")
_register_infinite(Normal, (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform), "loc")
_register_infinite(Pareto, (Beta, ContinuousBernoulli, Uniform), "scale")
_register_infinite(Poisson, (Bernoulli, Binomial), "rate")
