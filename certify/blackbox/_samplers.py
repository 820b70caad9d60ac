"""Samplers of the suite's mechanisms: their parameters, the noise draws and one sampler each.

The parameters are those of DP-Sniper's ``exp_default.py`` and the mechanisms' defaults. Every
``_sample_*`` function maps ``(x, n, rng)`` to ``n`` independent outputs of one mechanism of
:data:`certify.blackbox.suite.SUITE`, vectorized over calls and drawing only from ``rng``; the
helpers are the Laplace and exponential noise draws, the truncated geometric tables, the sparse
vector loops and RAPPOR's Bloom filter (MurmurHash3). Shapes, dtypes and encodings are described
in the docstring of :mod:`certify.blackbox.suite`.
"""

from __future__ import annotations

import math
from typing import Final, Literal

import numpy as np
from numpy.typing import NDArray

# ---------------------------------------------------------------------------------------------
# Parameters (DP-Sniper's exp_default.py and the mechanisms' defaults)

_EPSILON: Final = 0.1
_LAPLACE_SCALE: Final = 1.0 / _EPSILON
_HIST_BINS: Final = 5
_RNM_QUERIES: Final = 5
_RNM_SCALE: Final = 2.0 / _EPSILON
_SVT_QUERIES: Final = 10
_TG_N: Final = 5
_TG_K: Final = math.ceil(math.log(2.0 / _EPSILON))
"""DP-Sniper's k = ceil(ln(2 / eps)) with the natural logarithm: 3 at eps = 0.1."""
_RAPPOR_HASHES: Final = 4
_RAPPOR_BITS: Final = 20
_RAPPOR_F: Final = 0.75
_RAPPOR_P: Final = 0.45
_RAPPOR_Q: Final = 0.55
_OTR_F: Final = 0.95
_PARALLEL_COPIES: Final = 20
_PARALLEL_EPSILON: Final = 0.005


# ---------------------------------------------------------------------------------------------
# Noise


def _laplace(rng: np.random.Generator, scale: float, size: int) -> NDArray[np.float64]:
    """``size`` iid Laplace(0, scale) draws, as the difference of two standard exponentials."""
    draws = rng.standard_exponential(size)
    draws -= rng.standard_exponential(size)
    draws *= scale
    return draws


def _noise(
    rng: np.random.Generator, law: Literal["laplace", "exponential"], scale: float, size: int
) -> NDArray[np.float64]:
    """``size`` iid draws of Laplace(0, scale) or Exponential(scale) noise."""
    if law == "laplace":
        return _laplace(rng, scale, size)
    draws = rng.standard_exponential(size)
    draws *= scale
    return draws


def _noisy_columns(
    values: NDArray[np.float64], n: int, rng: np.random.Generator, scale: float
) -> NDArray[np.float64]:
    """Rows ``values + Lap(scale)`` with independent noise, filled one column at a time."""
    out = np.empty((n, values.size))
    for j, value in enumerate(values):
        column = _laplace(rng, scale, n)
        column += value
        out[:, j] = column
    return out


# ---------------------------------------------------------------------------------------------
# Samplers, one per mechanism


def _sample_laplace(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Laplace mechanism: ``x[0] + Lap(1 / 0.1)``; output shape ``(n,)``, float64."""
    out = _laplace(rng, _LAPLACE_SCALE, n)
    out += x[0]
    return out


def _geometric_cdf_table(count: int) -> NDArray[np.int64]:
    """F(0..n) of Balcer and Vadhan's GeoSample, Step 2, as exact integers over d."""
    k, m = _TG_K, _TG_N
    base = 2**k + 1
    d = (2 ** (k + 1) + 1) * base ** (m - 1)
    table = [2 ** (k * (count - z)) * base ** (m - (count - z)) for z in range(count)]
    table += [d - 2 ** (k * (z - count + 1)) * base ** (m - 1 - (z - count)) for z in range(count, m)]
    table.append(d)
    return np.array(table, dtype=np.int64)


_TG_TABLES: Final = tuple(_geometric_cdf_table(c) for c in range(_TG_N + 1))
_TG_DENOMINATOR: Final = int(_TG_TABLES[0][-1])


def _sample_truncated_geometric(
    x: NDArray[np.float64], n: int, rng: np.random.Generator
) -> NDArray[np.int64]:
    """GeoSample: the smallest z in 0..5 with F(z) >= U, U uniform on 1..d; shape ``(n,)``, int64.

    ``k = ceil(ln(2 / 0.1)) = 3`` and ``d = (2^(k+1) + 1)(2^k + 1)^4``; all arithmetic is exact.
    """
    table = _TG_TABLES[int(x[0])]
    u = rng.integers(1, _TG_DENOMINATOR, size=n, endpoint=True)
    return np.searchsorted(table, u, side="left").astype(np.int64, copy=False)


def _sample_noisy_hist1(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Noisy histogram: each bin plus Lap(1 / 0.1); shape ``(n, 5)``, float64."""
    return _noisy_columns(x, n, rng, 1.0 / _EPSILON)


def _sample_noisy_hist2(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Noisy histogram with scale ``eps`` instead of ``1 / eps``: each bin plus Lap(0.1); ``(n, 5)``."""
    return _noisy_columns(x, n, rng, _EPSILON)


def _noisy_max(
    x: NDArray[np.float64],
    n: int,
    rng: np.random.Generator,
    *,
    law: Literal["laplace", "exponential"],
    report: Literal["index", "value"],
) -> NDArray[np.int64] | NDArray[np.float64]:
    """Index or value of the largest ``x[j] + noise_j`` (noise of scale 2 / 0.1), by a running max."""
    best = _noise(rng, law, _RNM_SCALE, n)
    best += x[0]
    index = np.zeros(n, dtype=np.int64)
    for j in range(1, x.size):
        candidate = _noise(rng, law, _RNM_SCALE, n)
        candidate += x[j]
        if report == "index":
            index[candidate > best] = j
        np.maximum(best, candidate, out=best)
    return index if report == "index" else best


def _sample_rnm1(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Report noisy max, Laplace noise Lap(2 / 0.1): the argmax index in 0..4; ``(n,)``, int64."""
    return _noisy_max(x, n, rng, law="laplace", report="index").astype(np.int64, copy=False)


def _sample_rnm2(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Report noisy max, exponential noise of scale 2 / 0.1: the argmax index; ``(n,)``, int64."""
    return _noisy_max(x, n, rng, law="exponential", report="index").astype(np.int64, copy=False)


def _sample_rnm3(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Noisy max with Lap(2 / 0.1) noise that releases the max value; ``(n,)``, float64."""
    return _noisy_max(x, n, rng, law="laplace", report="value").astype(np.float64, copy=False)


def _sample_rnm4(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Noisy max with exponential noise (scale 2 / 0.1) that releases the max value; ``(n,)``, float64."""
    return _noisy_max(x, n, rng, law="exponential", report="value").astype(np.float64, copy=False)


def _svt_flags(
    x: NDArray[np.float64],
    n: int,
    rng: np.random.Generator,
    *,
    threshold: float,
    rho_scale: float,
    nu_scale: float,
    cutoff: int | None,
    refresh: bool = False,
) -> NDArray[np.int64]:
    """Sparse vector with binary answers: 1 above, 0 below, -1 after ``cutoff`` answers above.

    Query ``j`` is above when ``x[j] + nu_j >= threshold + rho``, with ``rho ~ Lap(rho_scale)``
    and ``nu_j ~ Lap(nu_scale)`` (no query noise when ``nu_scale == 0``). With ``refresh`` the
    threshold noise is redrawn after each answer above (Lyu et al., Alg. 2). ``cutoff=None``
    never stops.
    """
    noisy_threshold = _laplace(rng, rho_scale, n)
    noisy_threshold += threshold
    out = np.empty((n, x.size), dtype=np.int64)
    count = np.zeros(n, dtype=np.int64)
    for j, value in enumerate(x):
        if nu_scale > 0.0:
            answer = _laplace(rng, nu_scale, n)
            answer += value
            above = answer >= noisy_threshold
        else:
            above = value >= noisy_threshold
        if cutoff is None:
            out[:, j] = above
            continue
        active = count < cutoff
        column = above.astype(np.int64)
        column[~active] = -1
        out[:, j] = column
        hit = above & active
        count += hit
        if refresh:
            renew = hit & (count < cutoff)
            k = int(np.count_nonzero(renew))
            if k:
                noisy_threshold[renew] = threshold + _laplace(rng, rho_scale, k)
    return out


def _svt_values(
    x: NDArray[np.float64],
    n: int,
    rng: np.random.Generator,
    *,
    threshold: float,
    rho_scale: float,
    nu_scale: float,
    value_scale: float | None,
    cutoff: int,
) -> NDArray[np.float64]:
    """Sparse vector that releases values: columns ``[flags | values]``, shape ``(n, 2 * len(x))``.

    Flags are 1 (above), 0 (below), -1 (stopped after ``cutoff`` answers above). The value column
    holds the released number where the flag is 1 and 0.0 elsewhere: the compared noisy answer
    ``x[j] + nu_j`` when ``value_scale is None`` (Lyu et al., Alg. 3), else a fresh
    ``x[j] + Lap(value_scale)`` (numerical sparse vector).
    """
    m = x.size
    noisy_threshold = _laplace(rng, rho_scale, n)
    noisy_threshold += threshold
    out = np.zeros((n, 2 * m))
    count = np.zeros(n, dtype=np.int64)
    for j, value in enumerate(x):
        answer = _laplace(rng, nu_scale, n)
        answer += value
        above = answer >= noisy_threshold
        active = count < cutoff
        hit = above & active
        flags = above.astype(np.float64)
        flags[~active] = -1.0
        out[:, j] = flags
        if value_scale is None:
            out[hit, m + j] = answer[hit]
        else:
            k = int(np.count_nonzero(hit))
            out[hit, m + j] = value + _laplace(rng, value_scale, k)
        count += hit
    return out


_SVT3_SCALES: Final = (1.0 / (_EPSILON / 2), 1.0 / (_EPSILON / 2))
"""(rho, nu) scales of Lyu et al. Alg. 3 at c = 1: Lap(1 / eps1) and Lap(c / eps2), eps1 = eps2 = eps / 2."""
_SVT4_SCALES: Final = (1.0 / (_EPSILON / 4), 1.0 / (3 * _EPSILON / 4))
"""(rho, nu) scales of Lyu et al. Alg. 4: Lap(1 / eps1), Lap(1 / eps2), eps1 = eps / 4, eps2 = 3 eps / 4."""
_SVT56_SCALE: Final = 1.0 / (_EPSILON / 2)


def _sample_svt1(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Lyu et al. Alg. 1 (c = 1, T = 0.5): rho ~ Lap(20), nu ~ Lap(40); ``(n, 10)`` int64 flags 1/0/-1."""
    return _svt_flags(x, n, rng, threshold=0.5, rho_scale=20.0, nu_scale=40.0, cutoff=1)


def _sample_svt2(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Lyu et al. Alg. 2 (c = 1, T = 1): rho ~ Lap(20) redrawn after each 1, nu ~ Lap(40); flags 1/0/-1."""
    return _svt_flags(x, n, rng, threshold=1.0, rho_scale=20.0, nu_scale=40.0, cutoff=1, refresh=True)


def _sample_svt3(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Lyu et al. Alg. 3 (c = 1, T = 1): rho ~ Lap(20), nu ~ Lap(20); ``(n, 20)``: [flags | answers]."""
    rho, nu = _SVT3_SCALES
    return _svt_values(x, n, rng, threshold=1.0, rho_scale=rho, nu_scale=nu, value_scale=None, cutoff=1)


def _sample_svt4(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Lyu et al. Alg. 4 (c = 1, T = 1): rho ~ Lap(40), nu ~ Lap(40 / 3); ``(n, 10)`` int64 flags 1/0/-1."""
    rho, nu = _SVT4_SCALES
    return _svt_flags(x, n, rng, threshold=1.0, rho_scale=rho, nu_scale=nu, cutoff=1)


def _sample_svt5(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Lyu et al. Alg. 5 (T = 1): rho ~ Lap(20), no query noise, no cutoff; ``(n, 10)`` int64 flags 1/0."""
    return _svt_flags(x, n, rng, threshold=1.0, rho_scale=_SVT56_SCALE, nu_scale=0.0, cutoff=None)


def _sample_svt6(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Lyu et al. Alg. 6 (T = 1): rho ~ Lap(20), nu ~ Lap(20), no cutoff; ``(n, 10)`` int64 flags 1/0."""
    return _svt_flags(x, n, rng, threshold=1.0, rho_scale=_SVT56_SCALE, nu_scale=_SVT56_SCALE, cutoff=None)


# RAPPOR: Bloom filter with MurmurHash3 (x86, 32 bit) of the value's decimal string, seeds 0..h-1


_MASK32: Final = 0xFFFFFFFF


def _rotl32(value: int, shift: int) -> int:
    """Rotate a 32-bit word left."""
    return ((value << shift) | (value >> (32 - shift))) & _MASK32


def _murmur3_32(data: bytes, seed: int) -> int:
    """MurmurHash3_x86_32 of ``data`` (unsigned 32-bit result)."""
    c1, c2 = 0xCC9E2D51, 0x1B873593
    h = seed & _MASK32
    blocks = len(data) // 4
    for i in range(blocks):
        k = int.from_bytes(data[4 * i : 4 * i + 4], "little")
        k = (_rotl32((k * c1) & _MASK32, 15) * c2) & _MASK32
        h = (_rotl32(h ^ k, 13) * 5 + 0xE6546B64) & _MASK32
    tail = data[4 * blocks :]
    if tail:
        k = int.from_bytes(tail, "little")
        h ^= (_rotl32((k * c1) & _MASK32, 15) * c2) & _MASK32
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK32
    return h ^ (h >> 16)


def _bloom_bits(value: int) -> frozenset[int]:
    """Bloom-filter positions of an integer value: signed MurmurHash3 of ``str(value)`` modulo 20."""
    data = str(value).encode()
    positions = set()
    for seed in range(_RAPPOR_HASHES):
        h = _murmur3_32(data, seed)
        signed = h - (1 << 32) if h >= 1 << 31 else h
        positions.add(signed % _RAPPOR_BITS)
    return frozenset(positions)


def _permanent_response(bit: bool, u: NDArray[np.float64], f: float) -> NDArray[np.bool_]:
    """Permanent randomized response: 1 w.p. f/2, 0 w.p. f/2, the Bloom bit w.p. 1 - f."""
    if bit:
        return (u < f / 2) | (u >= f)
    return u < f / 2


def _sample_rappor(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """RAPPOR steps 1-3 (h = 4, k = 20, f = 0.75, p = 0.45, q = 0.55); ``(n, 20)`` int64 bits 0/1.

    Step 1 sets the Bloom bits of ``str(int(x[0]))``; step 2 draws a fresh permanent randomized
    response per call; step 3 reports 1 with probability q where that response is 1 and p where
    it is 0.
    """
    bits = _bloom_bits(int(x[0]))
    out = np.empty((n, _RAPPOR_BITS), dtype=np.int64)
    for j in range(_RAPPOR_BITS):
        permanent = _permanent_response(j in bits, rng.random(n), _RAPPOR_F)
        out[:, j] = rng.random(n) < np.where(permanent, _RAPPOR_Q, _RAPPOR_P)
    return out


def _sample_one_time_rappor(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """RAPPOR steps 1-2 (h = 4, k = 20, f = 0.95): the permanent response; ``(n, 20)`` int64 bits 0/1."""
    bits = _bloom_bits(int(x[0]))
    out = np.empty((n, _RAPPOR_BITS), dtype=np.int64)
    for j in range(_RAPPOR_BITS):
        out[:, j] = _permanent_response(j in bits, rng.random(n), _OTR_F)
    return out


def _sample_laplace_parallel(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """20 independent Laplace mechanisms at eps = 0.005: ``x[0] + Lap(200)`` per column; ``(n, 20)``."""
    return _noisy_columns(np.full(_PARALLEL_COPIES, x[0]), n, rng, 1.0 / _PARALLEL_EPSILON)


def _sample_svt34_parallel(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Alg. 3 and Alg. 4 of Lyu et al. at c = 2, T = 1, independent; ``(n, 30)`` float64.

    Columns 0-9: Alg. 3 flags (1/0/-1); 10-19: Alg. 3 released noisy answers (0.0 unless the flag
    is 1); 20-29: Alg. 4 flags (1/0/-1). Alg. 3 uses rho ~ Lap(20), nu ~ Lap(c / eps2) = Lap(40);
    Alg. 4 uses rho ~ Lap(40), nu ~ Lap(40 / 3).
    """
    out = np.empty((n, 3 * x.size))
    out[:, : 2 * x.size] = _svt_values(
        x, n, rng, threshold=1.0, rho_scale=20.0, nu_scale=40.0, value_scale=None, cutoff=2
    )
    rho, nu = _SVT4_SCALES
    out[:, 2 * x.size :] = _svt_flags(x, n, rng, threshold=1.0, rho_scale=rho, nu_scale=nu, cutoff=2)
    return out


def _sample_prefix_sum(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """PrefixSum: column j is ``sum_{i <= j} (x[i] + Lap(1 / 0.1))``; ``(n, 10)`` float64."""
    out = np.empty((n, x.size))
    running = np.zeros(n)
    for j, value in enumerate(x):
        running += _laplace(rng, 1.0 / _EPSILON, n)
        running += value
        out[:, j] = running
    return out


def _sample_numerical_svt(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Numerical sparse vector (c = 2, T = 1): ``(n, 20)`` = [flags 1/0/-1 | released values].

    rho1 ~ Lap(3 / eps) = Lap(30) on the threshold, rho2 ~ Lap(6c / eps) = Lap(120) on each
    comparison, and each answer above releases a fresh ``x[j] + Lap(3c / eps)`` = Lap(60) draw;
    the value column is 0.0 where the flag is not 1 (the algorithm outputs 0 for answers below).
    """
    return _svt_values(x, n, rng, threshold=1.0, rho_scale=30.0, nu_scale=120.0, value_scale=60.0, cutoff=2)
