"""The compiled KDE-LR kernel (paper Eq. 10-11), cached on disk across processes.

Importing this module compiles nothing: numba compiles :func:`score_cells` on its first call, or
loads the machine code a previous process saved (``cache=True``). The cache goes where numba's
locators find a writable place: ``NUMBA_CACHE_DIR`` when set, else the ``__pycache__`` folder
beside this file, else the user-wide cache folder (``~/.cache/numba`` or ``$XDG_CACHE_HOME``);
with none writable (a read-only install and home), :func:`_jit` compiles without a cache, once
per process, as before. Cached code is keyed by this file's content and the CPU, so an edited
kernel or another machine recompiles.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Final, TypeVar, no_type_check

import numpy as np
from numba import njit, prange

__all__ = ["CACHED", "score_cells"]

_SQRT_2PI: Final = math.sqrt(2.0 * math.pi)
# Kernel values below this bound (relative to the smallest mixed density, see score_cells) are
# skipped; the skipped mass changes every floored density by at most this relative amount.
_SKIP_RELATIVE: Final = 1e-15
# Never follow a kernel below this value (avoids slow subnormal arithmetic).
_SMALLEST_KERNEL: Final = 1e-300

_F = TypeVar("_F", bound=Callable[..., Any])

CACHED: list[str] = []
"""Names of the kernels compiled with an on-disk cache (the others compile once per process)."""


def _jit(**options: Any) -> Callable[[_F], _F]:
    """``numba.njit(cache=True, **options)``, or without the cache when no folder is writable."""

    def wrap(fn: _F) -> _F:
        try:
            compiled = njit(cache=True, **options)(fn)
            CACHED.append(fn.__name__)
        except RuntimeError:  # "cannot cache function ...: no locator available"
            compiled = njit(cache=False, **options)(fn)
        return compiled  # type: ignore[no-any-return]

    return wrap


# Only reassociation is allowed, and only here: it lets LLVM vectorize the sum of the
# (positive) kernel values, whose rounding error bound does not depend on the order.
@_jit(fastmath={"reassoc"}, nogil=True)
@no_type_check  # compiled code: keep run-time type checkers out of it
def _sweep_sum(k_val: Any, ratio: Any, lo_i: int, hi_i: int, q: float) -> float:
    """Sum k_val[lo_i:hi_i], then advance each kernel value one grid step."""
    k_win = k_val[lo_i:hi_i]
    r_win = ratio[lo_i:hi_i]
    total = 0.0
    for i in range(k_win.shape[0]):  # a zero-based loop, so no wraparound checks
        total += k_win[i]
        k_win[i] *= r_win[i]
        r_win[i] *= q
    return total


@_jit(fastmath=False, nogil=True)
@no_type_check  # compiled code: keep run-time type checkers out of it
def _kernel_sums(
    x: Any,
    h: float,
    lo: float,
    step: float,
    g: int,
    cut: float,
    out: Any,
    start: Any,
    shift: Any,
    k_val: Any,
    ratio: Any,
    e_mid: Any,
    e_step: Any,
) -> None:
    """out[k] = sum_i exp(-(lo + k step - x_i)^2 / (2 h^2)) for sorted x, skipping < cut.

    ``start``, ``shift``, ``k_val``, ``ratio``, ``e_mid`` and ``e_step`` are scratch space of at
    least ``len(x)`` entries.
    """
    n = x.shape[0]
    c = step / h
    half_c2 = 0.5 * c * c
    q = math.exp(-c * c)
    q_half = math.exp(-half_c2)
    # exp(t c) with |t c| <= c^2 / 2 is safe to invert while c^2 / 2 is far from overflow.
    cheap = half_c2 < 300.0
    for i in range(n):
        m = math.floor((x[i] - lo) / step + 0.5)
        m = min(max(m, 0), g - 1)
        start[i] = m
        t = (lo + m * step - x[i]) / h
        shift[i] = t
        if cheap:
            # Both sweeps start from these two values; computed once, used twice.
            e_mid[i] = math.exp(-0.5 * t * t)
            e_step[i] = math.exp(t * c)
    for k in range(g):
        out[k] = 0.0
    # Rightward: sample i contributes at grid points k >= start[i]; at its nearest point
    # t = shift >= -c/2, so the step factor exp(-t c - c^2/2) <= 1 and then shrinks by q.
    first = 0
    last = 0
    for k in range(g):
        while last < n and start[last] <= k:
            if cheap:
                k_val[last] = e_mid[last]
                ratio[last] = q_half / e_step[last]
            else:
                t = shift[last]
                k_val[last] = math.exp(-0.5 * t * t)
                ratio[last] = math.exp(-t * c - half_c2)
            last += 1
        while first < last and k_val[first] < cut:
            first += 1
        if first < last:
            out[k] += _sweep_sum(k_val, ratio, first, last, q)
    # Leftward: sample i contributes at grid points k < start[i], starting at
    # u = t - c <= -c/2, with step factor exp(u c - c^2/2) <= 1, then shrinking by q.
    first = n
    last = n
    for k in range(g - 1, -1, -1):
        while first > 0 and start[first - 1] > k:
            first -= 1
            if cheap:
                e = e_step[first] * q_half
                k_val[first] = e_mid[first] * e
                ratio[first] = e * q
            else:
                u = shift[first] - c
                k_val[first] = math.exp(-0.5 * u * u)
                ratio[first] = math.exp(u * c - half_c2)
        while last > first and k_val[last - 1] < cut:
            last -= 1
        if first < last:
            out[k] += _sweep_sum(k_val, ratio, first, last, q)


@_jit(parallel=True, fastmath=False)
@no_type_check  # compiled code: keep run-time type checkers out of it
def score_cells(
    xs: Any,
    offsets: Any,
    bw: Any,
    pair_a: Any,
    pair_b: Any,
    alpha: float,
    g: int,
    floor: float,
    margin: float,
    n_threads: int,
) -> Any:
    """Per-coordinate KDE-LR scores for every (pair, coordinate) cell.

    ``xs`` holds every identity's samples with each coordinate sorted, one sample per row, shape
    ``(sum n_i, d)``; identity ``i`` owns rows ``offsets[i]:offsets[i + 1]`` and bandwidths
    ``bw[i]``. Returns an array of shape ``(len(pair_a), d)``. ``n_threads``
    (``numba.get_num_threads()``) only sets how the cells are blocked for the threads; results
    do not depend on it. It is an argument because a compiled call of ``numba.get_num_threads``
    could not be cached.
    """
    d = xs.shape[1]
    n_pairs = pair_a.shape[0]
    n_cells = n_pairs * d
    out = np.empty((n_pairs, d))
    n_max = 0
    for i in range(offsets.shape[0] - 1):
        n_max = max(n_max, offsets[i + 1] - offsets[i])
    n_blocks = min(n_cells, 64 * n_threads)
    for blk in prange(n_blocks):
        dens_a = np.empty(g)
        dens_b = np.empty(g)
        start = np.empty(n_max, dtype=np.int64)
        shift = np.empty(n_max)
        k_val = np.empty(n_max)
        ratio = np.empty(n_max)
        e_mid = np.empty(n_max)
        e_step = np.empty(n_max)
        for cell in range(blk * n_cells // n_blocks, (blk + 1) * n_cells // n_blocks):
            p = cell // d
            j = cell - p * d
            ia = pair_a[p]
            ib = pair_b[p]
            xa = xs[offsets[ia] : offsets[ia + 1], j]
            xb = xs[offsets[ib] : offsets[ib + 1], j]
            ha = bw[ia, j]
            hb = bw[ib, j]
            h_max = max(ha, hb)
            lo = min(xa[0], xb[0]) - margin * h_max
            hi = max(xa[xa.shape[0] - 1], xb[xb.shape[0] - 1]) + margin * h_max
            width = hi - lo
            step = width / (g - 1)
            uniform = alpha / width
            smallest_density = max(floor, uniform)
            if alpha < 1.0:
                scale = _SKIP_RELATIVE * _SQRT_2PI * smallest_density / (1.0 - alpha)
                cut_a = max(_SMALLEST_KERNEL, scale * ha)
                cut_b = max(_SMALLEST_KERNEL, scale * hb)
            else:
                cut_a = np.inf
                cut_b = np.inf
            _kernel_sums(xa, ha, lo, step, g, cut_a, dens_a, start, shift, k_val, ratio, e_mid, e_step)
            _kernel_sums(xb, hb, lo, step, g, cut_b, dens_b, start, shift, k_val, ratio, e_mid, e_step)
            norm_a = (1.0 - alpha) / (xa.shape[0] * ha * _SQRT_2PI)
            norm_b = (1.0 - alpha) / (xb.shape[0] * hb * _SQRT_2PI)
            # max_k |log(pa_k / pb_k)| = max(log(max_k ratio), -log(min_k ratio)).
            top = 1.0
            bottom = 1.0
            for k in range(g):
                pa = max(norm_a * dens_a[k] + uniform, floor)
                pb = max(norm_b * dens_b[k] + uniform, floor)
                r = pa / pb
                top = max(top, r)
                bottom = min(bottom, r)
            out[p, j] = max(math.log(top), -math.log(bottom))
    return out
