"""Samplers of the known-bug mechanisms in :data:`certify.blackbox.BUGS`.

Every sampler is ``sampler(x, n, rng)`` on a float64 input vector and draws its randomness from
the numpy ``Generator`` only. The Gaussian and inversion-Laplace samplers follow the
descriptions of Lokna et al. (Delta-Siege, CCS 2023): uniforms on the grid ``k / 2**32`` (a
32-bit generator), Box-Muller, Marsaglia's polar method, the 256-layer ziggurat of Marsaglia
and Tsang, and inversion of the Laplace CDF, each added to the input on doubles. The others are
written here from the bug they show.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Final

import numpy as np
from numpy.typing import NDArray

WORD: Final = 2**32
"""States of the simulated 32-bit uniform generator."""

TEXTBOOK_SCALE: Final = 10.0
"""Scale of the textbook Laplace mechanism (sensitivity 1, epsilon 0.1)."""

LAPLACE_EPSILON: Final = 0.1
GAUSS_EPSILON: Final = 1.0
GAUSS_DELTA: Final = 1e-6
GAUSS_SIGMA: Final = math.sqrt(2.0 * math.log(1.25 / GAUSS_DELTA)) / GAUSS_EPSILON
"""The classic Gaussian mechanism's sigma at (1, 1e-6), sensitivity 1 (Dwork and Roth, Thm A.1)."""

COUNT_EPSILON: Final = 0.1
"""Epsilon of the integer (two-sided geometric) noise of the count-like bugs."""

_ZIG_LAYERS: Final = 256
_ZIG_R: Final = 3.6541528853610088
_ZIG_V: Final = 0.00492867323399


def _uniform32(rng: np.random.Generator, n: int) -> NDArray[np.float64]:
    """``n`` uniforms on ``{0, 1/2**32, ..., 1 - 1/2**32}`` (a 32-bit generator)."""
    out: NDArray[np.float64] = rng.integers(0, WORD, size=n, dtype=np.int64) / WORD
    return out


def _sign32(rng: np.random.Generator, n: int) -> NDArray[np.float64]:
    """Random signs from a 32-bit uniform (``+1`` when it is below one half)."""
    out: NDArray[np.float64] = np.where(_uniform32(rng, n) < 0.5, 1.0, -1.0)
    return out


def textbook_laplace(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """``x + Lap(10)`` by numpy's inverse-CDF sampler on doubles (Mironov's textbook mechanism)."""
    out: NDArray[np.float64] = x[0] + rng.laplace(0.0, TEXTBOOK_SCALE, size=n)
    return out


def inversion_laplace(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Laplace noise by inverting the exponential CDF of a 32-bit uniform, times a random sign."""
    magnitude = -np.log(1.0 - _uniform32(rng, n))
    out: NDArray[np.float64] = x[0] + _sign32(rng, n) * magnitude * (1.0 / LAPLACE_EPSILON)
    return out


def box_muller(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Gaussian noise by Box-Muller on two 32-bit uniforms (the cosine branch).

    The radius uses ``1 - u`` so that ``u = 0`` gives a finite radius (at most ``sqrt(64 ln 2)``).
    """
    radius = np.sqrt(-2.0 * np.log(1.0 - _uniform32(rng, n)))
    angle = 2.0 * np.pi * _uniform32(rng, n)
    out: NDArray[np.float64] = x[0] + GAUSS_SIGMA * radius * np.cos(angle)
    return out


def polar(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Gaussian noise by Marsaglia's polar method on pairs of 32-bit uniforms (first coordinate)."""
    parts, have = [], 0
    while have < n:
        m = max(2 * (n - have), 64)
        v1, v2 = 2.0 * _uniform32(rng, m) - 1.0, 2.0 * _uniform32(rng, m) - 1.0
        s = v1 * v1 + v2 * v2
        keep = (s > 0.0) & (s < 1.0)
        z = v1[keep] * np.sqrt(-2.0 * np.log(s[keep]) / s[keep])
        parts.append(z)
        have += z.size
    out: NDArray[np.float64] = x[0] + GAUSS_SIGMA * np.concatenate(parts)[:n]
    return out


def _density(z: NDArray[np.float64]) -> NDArray[np.float64]:
    """The unnormalized standard normal density ``exp(-z^2 / 2)``."""
    out: NDArray[np.float64] = np.exp(-0.5 * np.square(z))
    return out


def _scalar_density(z: float) -> float:
    """``exp(-z^2 / 2)`` of one number."""
    return math.exp(-0.5 * float(z) * float(z))


def _ziggurat_tables() -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Layer edges ``x``, widths ``w`` and inner ratios ``k`` of the 256-layer ziggurat.

    ``x[0] = 0 < x[1] < ... < x[255] = r``; layer ``i >= 1`` is the strip between the density
    at ``x[i]`` and at ``x[i - 1]``, of width ``x[i]``; layer 0 is the base strip of area ``v``
    (width ``v / f(r)``) with the tail beyond ``r``. ``k[i]`` is the share of layer ``i`` that
    lies under the density for sure.
    """
    edge = np.empty(_ZIG_LAYERS)
    edge[-1] = _ZIG_R
    for i in range(_ZIG_LAYERS - 2, 0, -1):
        edge[i] = math.sqrt(-2.0 * math.log(_scalar_density(edge[i + 1]) + _ZIG_V / edge[i + 1]))
    edge[0] = 0.0
    width = edge.copy()
    width[0] = _ZIG_V / _scalar_density(_ZIG_R)
    ratio = np.empty(_ZIG_LAYERS)
    ratio[1:] = edge[:-1] / edge[1:]
    ratio[0] = _ZIG_R * _scalar_density(_ZIG_R) / _ZIG_V
    return edge, width, ratio


_ZIG_EDGE, _ZIG_WIDTH, _ZIG_RATIO = _ziggurat_tables()


def _ziggurat_tail(rng: np.random.Generator, n: int) -> NDArray[np.float64]:
    """``n`` draws of the normal tail beyond ``r`` (Marsaglia's exponential rejection)."""
    parts, have = [], 0
    while have < n:
        m = max(2 * (n - have), 16)
        a = -np.log(1.0 - _uniform32(rng, m)) / _ZIG_R
        b = -np.log(1.0 - _uniform32(rng, m))
        z = _ZIG_R + a[2.0 * b > a * a]
        parts.append(z)
        have += z.size
    return np.concatenate(parts)[:n] if parts else np.empty(0)


def ziggurat(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Gaussian noise by the 256-layer ziggurat on 32-bit uniforms, times a random sign."""
    parts, have = [], 0
    while have < n:
        m = n - have + 16
        layer = rng.integers(0, _ZIG_LAYERS, size=m)
        u = _uniform32(rng, m)
        z = u * _ZIG_WIDTH[layer]
        inner = u < _ZIG_RATIO[layer]
        base = ~inner & (layer == 0)
        edge = ~inner & ~base
        wedge_layer = layer[edge]
        low, high = _density(_ZIG_EDGE[wedge_layer]), _density(_ZIG_EDGE[wedge_layer - 1])
        wedge = _uniform32(rng, int(edge.sum())) * (high - low) < _density(z[edge]) - low
        found = np.concatenate([z[inner], _ziggurat_tail(rng, int(base.sum())), z[edge][wedge]])
        parts.append(found)
        have += found.size
    noise = np.concatenate(parts)[:n] * _sign32(rng, n)
    out: NDArray[np.float64] = x[0] + GAUSS_SIGMA * noise
    return out


def _two_sided_geometric(
    rng: np.random.Generator, n: int, scale: float | NDArray[np.float64]
) -> NDArray[np.int64]:
    """Integer noise ``P(k) ~ exp(-|k| / scale)`` (the difference of two geometric draws)."""
    p = -np.expm1(-1.0 / np.asarray(scale, dtype=np.float64))
    out: NDArray[np.int64] = rng.geometric(p, size=n) - rng.geometric(p, size=n)
    return out


def unclamped_count(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """A noisy sum of rows declared in [0, 1] (sensitivity 1) that never clamps them."""
    total = round(float(np.sum(x)))
    out: NDArray[np.int64] = total + _two_sided_geometric(rng, n, 1.0 / COUNT_EPSILON)
    return out


def data_sensitivity(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """A noisy sum whose noise scale is the data's own largest row (a sensitivity from the data)."""
    local = max(1.0, float(np.max(np.abs(x))))
    total = round(float(np.sum(x)))
    out: NDArray[np.int64] = total + _two_sided_geometric(rng, n, local / COUNT_EPSILON)
    return out


def nan_clip(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """A noisy sum of rows clipped to [0, 1] with ``np.clip``, which lets a missing (NaN) row through.

    The input holds ``k`` row values then ``k`` missing flags; a flagged row is read as NaN, as
    a CSV reader does with an empty field. The release ``total + noise`` is reported as two
    columns, ``(is NaN, value or 0)``, so that a NaN release is an output like any other.
    """
    k = x.size // 2
    rows = np.where(x[k:] > 0.5, np.nan, x[:k])
    total = float(np.sum(np.clip(rows, 0.0, 1.0)))
    noisy = total + _two_sided_geometric(rng, n, 1.0 / COUNT_EPSILON)
    is_nan = np.isnan(noisy)
    return np.column_stack([is_nan.astype(np.float64), np.where(is_nan, 0.0, noisy)])


CURATOR_JUMP: Final = 10**6
"""How far the curator mechanism's leak puts the input (far beyond any noise it draws)."""


def curator(p: float) -> Callable[[NDArray[np.float64], int, np.random.Generator], NDArray[np.int64]]:
    """A noisy count that, with probability ``p``, releases ``x + 10**6`` instead (a curator attack)."""

    def sample(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.int64]:
        """Integer noise, except a far leak of the input with probability p."""
        value = round(float(x[0]))
        noisy = value + _two_sided_geometric(rng, n, 1.0 / COUNT_EPSILON)
        out: NDArray[np.int64] = np.where(rng.random(n) < p, value + CURATOR_JUMP, noisy)
        return out

    return sample
