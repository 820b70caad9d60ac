"""Exact output laws of the suite's mechanisms on small cases, for statistical tests.

Each function computes a probability from the mechanism's definition (closed forms, or one-dimensional
integrals over the threshold or winning noise with :func:`scipy.integrate.quad`), independently of the
samplers in :mod:`certify.blackbox._samplers`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import integrate
from scipy.special import logsumexp

__all__ = [
    "exponential_cdf",
    "laplace_cdf",
    "noisy_max_index_probabilities",
    "noisy_max_value_cdf",
    "permanent_response_probability",
    "rappor_report_probability",
    "refreshed_svt_pattern_probability",
    "svt_log_pattern_probability",
    "svt_noiseless_pattern_probability",
    "svt_pattern_probability",
    "svt_patterns",
    "svt_value_probability",
    "truncated_geometric_pmf",
]

Law = Literal["laplace", "exponential"]
Vector = Sequence[float] | NDArray[np.float64]
_TAIL = 60.0  # integrate over +-60 scales: the Laplace mass outside is e^-60


def laplace_cdf(u: ArrayLike, scale: float) -> NDArray[np.float64]:
    """CDF of Laplace(0, scale) at ``u``."""
    v = np.asarray(u, dtype=np.float64) / scale
    return np.where(v < 0, 0.5 * np.exp(np.minimum(v, 0.0)), 1.0 - 0.5 * np.exp(-np.maximum(v, 0.0)))


def _laplace_cdf_scalar(u: float, scale: float) -> float:
    """CDF of Laplace(0, scale) at a scalar ``u``."""
    return 0.5 * math.exp(u / scale) if u < 0 else 1.0 - 0.5 * math.exp(-u / scale)


def _laplace_pdf(u: float, scale: float) -> float:
    """Density of Laplace(0, scale) at ``u``."""
    return math.exp(-abs(u) / scale) / (2.0 * scale)


def exponential_cdf(u: ArrayLike, scale: float) -> NDArray[np.float64]:
    """CDF of Exponential(scale) at ``u``."""
    v = np.asarray(u, dtype=np.float64)
    return np.where(v > 0, -np.expm1(-np.maximum(v, 0.0) / scale), 0.0)


def _noise_cdf(law: Law, u: float, scale: float) -> float:
    """Scalar CDF of the noise law."""
    if law == "laplace":
        return _laplace_cdf_scalar(u, scale)
    return -math.expm1(-u / scale) if u > 0 else 0.0


def _noise_pdf(law: Law, u: float, scale: float) -> float:
    """Scalar density of the noise law."""
    if law == "laplace":
        return _laplace_pdf(u, scale)
    return math.exp(-u / scale) / scale if u >= 0 else 0.0


def _quad(func: Callable[[float], float], low: float, high: float, points: Sequence[float]) -> float:
    """Integral of ``func`` over [low, high], split at the kinks in ``points``."""
    edges = sorted({low, high, *(p for p in points if low < p < high)})
    total = 0.0
    for a, b in itertools.pairwise(edges):
        value, _ = integrate.quad(func, a, b, epsabs=1e-14, epsrel=1e-11, limit=200)
        total += value
    return total


def truncated_geometric_pmf(count: int, n_max: int, k: int) -> tuple[Fraction, ...]:
    """Law of GeoSample on {0..n_max} at ``count``: geometric, ratio 2^k / (2^k + 1), tails folded."""
    a = Fraction(2**k, 2**k + 1)
    probs = []
    for z in range(n_max + 1):
        if z == 0:
            probs.append(a**count / (1 + a))
        elif z == n_max:
            probs.append(a ** (n_max - count) / (1 + a))
        else:
            probs.append((1 - a) / (1 + a) * a ** abs(z - count))
    return tuple(probs)


def noisy_max_index_probabilities(x: Vector, law: Law, scale: float) -> NDArray[np.float64]:
    """P(argmax_j x_j + noise_j = i) for each ``i``: winner's density times the others' CDFs, integrated."""
    values = [float(v) for v in x]
    probs = []
    for i, xi in enumerate(values):
        others = [v for j, v in enumerate(values) if j != i]

        def integrand(v: float, xi: float = xi, others: list[float] = others) -> float:
            density = _noise_pdf(law, v - xi, scale)
            for xj in others:
                density *= _noise_cdf(law, v - xj, scale)
            return density

        low = xi if law == "exponential" else min(values) - _TAIL * scale
        high = max(values) + _TAIL * scale
        probs.append(_quad(integrand, low, high, values))
    return np.array(probs)


def noisy_max_value_cdf(x: Vector, law: Law, scale: float, t: ArrayLike) -> NDArray[np.float64]:
    """P(max_j x_j + noise_j <= t) = prod_j F(t - x_j)."""
    f = laplace_cdf if law == "laplace" else exponential_cdf
    ts = np.asarray(t, dtype=np.float64)
    out = np.ones_like(ts)
    for xj in x:
        out = out * f(ts - float(xj), scale)
    return np.asarray(out, dtype=np.float64)


def svt_patterns(length: int, cutoff: int | None) -> list[tuple[int, ...]]:
    """All outputs of a binary sparse vector: 1/0 answers, -1 after ``cutoff`` answers of 1."""
    if cutoff is None:
        return [tuple(p) for p in itertools.product((0, 1), repeat=length)]
    patterns = []
    for p in itertools.product((0, 1), repeat=length):
        out, ones = [], 0
        for bit in p:
            if ones >= cutoff:
                out.append(-1)
            else:
                out.append(bit)
                ones += bit
        patterns.append(tuple(out))
    return sorted(set(patterns))


def _segment_factor(
    r: float, segment: Sequence[tuple[int, float]], threshold: float, nu_scale: float
) -> float:
    """Product over answered queries of P(answer | threshold noise r) with Laplace query noise."""
    value = 1.0
    for flag, xj in segment:
        if flag == -1:
            continue
        below = _laplace_cdf_scalar(threshold + r - xj, nu_scale)
        value *= below if flag == 0 else 1.0 - below
    return value


def svt_pattern_probability(
    pattern: Sequence[int], x: Vector, threshold: float, rho_scale: float, nu_scale: float
) -> float:
    """P(output = pattern), threshold noise Lap(rho_scale), query noise Lap(nu_scale): integral over rho."""
    segment = [(int(f), float(v)) for f, v in zip(pattern, x, strict=True)]

    def integrand(r: float) -> float:
        return _laplace_pdf(r, rho_scale) * _segment_factor(r, segment, threshold, nu_scale)

    reach = _TAIL * max(rho_scale, nu_scale) + max(abs(float(v)) for v in x) + abs(threshold)
    return _quad(integrand, -reach, reach, [0.0, *(float(v) - threshold for v in x)])


def refreshed_svt_pattern_probability(
    pattern: Sequence[int], x: Vector, threshold: float, rho_scale: float, nu_scale: float
) -> float:
    """P(output = pattern) with the threshold noise redrawn after each 1 (Lyu et al. Alg. 2).

    The segments ending at each answer of 1 use independent threshold noises, so the probability
    is the product of one-noise integrals over the segments.
    """
    result, start = 1.0, 0
    flags = [int(f) for f in pattern]
    ends = [j + 1 for j, f in enumerate(flags) if f == 1]
    if not ends or ends[-1] < len(flags):
        ends.append(len(flags))
    for end in ends:
        part_flags = flags[start:end]
        part_x = [float(v) for v in x[start:end]]
        if all(f == -1 for f in part_flags):
            break
        result *= svt_pattern_probability(part_flags, part_x, threshold, rho_scale, nu_scale)
        start = end
    return result


def svt_noiseless_pattern_probability(
    pattern: Sequence[int], x: Vector, threshold: float, rho_scale: float
) -> float:
    """P(output = pattern) without query noise: query j is 1 iff rho <= x_j - threshold."""
    low, high = -math.inf, math.inf
    for flag, xj in zip(pattern, x, strict=True):
        if flag == 1:
            high = min(high, float(xj) - threshold)
        else:
            low = max(low, float(xj) - threshold)
    if high <= low:
        return 0.0
    return float(laplace_cdf(high, rho_scale) - laplace_cdf(low, rho_scale))


def svt_value_probability(
    k: int,
    x: Vector,
    threshold: float,
    rho_scale: float,
    nu_scale: float,
    low: float,
    high: float,
) -> float:
    """P(queries before ``k`` below, query ``k`` above, released ``x_k + nu_k`` in (low, high]).

    For Lyu et al. Alg. 3, whose released value is the compared noisy answer.
    """
    before = [(0, float(v)) for v in x[:k]]
    xk = float(x[k])

    def integrand(r: float) -> float:
        start = max(low, threshold + r)
        if start >= high:
            return 0.0
        inside = _laplace_cdf_scalar(high - xk, nu_scale) - _laplace_cdf_scalar(start - xk, nu_scale)
        return _laplace_pdf(r, rho_scale) * _segment_factor(r, before, threshold, nu_scale) * inside

    reach = _TAIL * max(rho_scale, nu_scale) + max(abs(float(v)) for v in x) + abs(threshold)
    kinks = [0.0, low - threshold, high - threshold, *(float(v) - threshold for v in x[: k + 1])]
    return _quad(integrand, -reach, reach, kinks)


def _laplace_logcdf(u: NDArray[np.float64], scale: float) -> NDArray[np.float64]:
    """Logarithm of the Laplace(0, scale) CDF, accurate in both tails."""
    v = u / scale
    return np.where(v < 0, math.log(0.5) + np.minimum(v, 0.0), np.log1p(-0.5 * np.exp(-np.maximum(v, 0.0))))


def svt_log_pattern_probability(
    pattern: Sequence[int],
    x: Vector,
    threshold: float,
    rho_scale: float,
    nu_scale: float,
    grid: NDArray[np.float64],
) -> float:
    """Logarithm of P(output = pattern), integrated on a uniform grid of threshold noise in log space.

    For inputs so extreme that the probability itself underflows.
    """
    acc = -np.abs(grid) / rho_scale - math.log(2.0 * rho_scale)
    for flag, xj in zip(pattern, x, strict=True):
        u = threshold + grid - float(xj)
        if flag == 0:
            acc = acc + _laplace_logcdf(u, nu_scale)
        elif flag == 1:
            acc = acc + _laplace_logcdf(-u, nu_scale)
    return float(logsumexp(acc)) + math.log(float(grid[1] - grid[0]))


def rappor_report_probability(bloom_bit: bool, f: float, p: float, q: float) -> float:
    """P(reported bit = 1 | Bloom bit): q* = f(p+q)/2 + (1-f) q if set, p* = f(p+q)/2 + (1-f) p if not."""
    return 0.5 * f * (p + q) + (1.0 - f) * (q if bloom_bit else p)


def permanent_response_probability(bloom_bit: bool, f: float) -> float:
    """P(permanent response = 1 | Bloom bit): 1 - f/2 if set, f/2 if not."""
    return 1.0 - f / 2 if bloom_bit else f / 2
