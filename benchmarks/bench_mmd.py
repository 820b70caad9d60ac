"""Squared-distance helper of the MMD statistics: current version versus the previous one.

The previous implementation (Gram form on centred rows, every entry with ``d2 <= 2**-10 scale``
recomputed from the explicit difference, then ``triu`` + transpose for the pooled case) is copied
below as the baseline. Both run in this process on the same data, alternating, and the best time of
each is compared. Cases: (a) randomized-response-like data, 600 x 512 pooled rows taking 3 values
plus a few distinct rows; (b) continuous data, 60 / 200 / 600 x 512, pooled and x-versus-y halves;
(c) one ``mmd2_unbiased`` call (median bandwidth) on the data of (a), with either helper.

Usage: ``python benchmarks/bench_mmd.py [--rounds 15] [--d 512]``
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterator
from unittest import mock

import numpy as np
from numpy.typing import NDArray

from certify.stats import _distances, mmd

_REFINE_FRACTION = 2.0**-10
_BLOCK_ELEMENTS = 2_000_000


def _row_chunks(rows: int, width: int) -> Iterator[slice]:
    """Slices of ``rows`` so that each chunk times ``width`` stays within the block budget."""
    step = max(1, _BLOCK_ELEMENTS // max(width, 1))
    for start in range(0, rows, step):
        yield slice(start, min(start + step, rows))


def baseline_sq_distances(
    x: NDArray[np.float64], y: NDArray[np.float64] | None = None
) -> NDArray[np.float64]:
    """The previous squared-distance helper, unchanged."""
    same = y is None
    yy = x if y is None else y
    center = np.vstack([x, yy]).mean(axis=0) if not same else x.mean(axis=0)
    xc = x - center
    yc = xc if same else yy - center
    nx = np.einsum("ij,ij->i", xc, xc)
    ny = nx if same else np.einsum("ij,ij->i", yc, yc)
    scale = nx[:, None] + ny[None, :]
    d2 = scale - 2.0 * (xc @ yc.T)
    rows, cols = np.nonzero(d2 <= _REFINE_FRACTION * scale)
    for part in _row_chunks(len(rows), x.shape[1]):
        diff = xc[rows[part]] - yc[cols[part]]
        d2[rows[part], cols[part]] = np.einsum("ij,ij->i", diff, diff)
    if same:
        upper = np.triu(d2, k=1)
        d2 = upper + upper.T
    clipped: NDArray[np.float64] = np.maximum(d2, 0.0, out=d2)
    return clipped


def best_times(old: Callable[[], object], new: Callable[[], object], rounds: int) -> tuple[float, float]:
    """Best wall time of each callable over ``rounds`` alternating runs (several calls per run)."""
    t0 = time.perf_counter()
    old()
    calls = max(1, min(200, int(0.02 / max(time.perf_counter() - t0, 1e-6))))
    t_old: list[float] = []
    t_new: list[float] = []
    for _ in range(rounds):
        for fn, acc in ((old, t_old), (new, t_new)):
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            acc.append((time.perf_counter() - t0) / calls)
    return min(t_old), min(t_new)


def best_of(fn: Callable[[], object], repeats: int) -> float:
    """Best wall time of ``repeats`` single calls."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def report(label: str, rows: tuple[NDArray[np.float64], ...], rounds: int) -> None:
    """Time both helpers on ``rows`` (pooled or x, y); print the times, their ratio and the difference."""
    a, b = baseline_sq_distances(*rows), _distances._sq_distances(*rows)
    diff = float(np.max(np.abs(a - b)))
    rel = float(np.max(np.abs(a - b) / np.where(a > 0.0, a, 1.0)))
    t_old, t_new = best_times(lambda: baseline_sq_distances(*rows), lambda: _distances._sq_distances(*rows),
                              rounds)
    print(
        f"{label:34s} old {t_old * 1e3:9.3f} ms  new {t_new * 1e3:8.3f} ms  old/new {t_old / t_new:7.2f}  "
        f"max|diff| {diff:.1e} (rel {rel:.1e})  bit-identical {np.array_equal(a, b)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--d", type=int, default=512)
    args = parser.parse_args()
    d = args.d

    rng = np.random.default_rng(0)
    rr = np.repeat(rng.normal(size=(3, d)), 200, axis=0)
    rr[:5] = rng.normal(size=(5, d))
    report("(a) repeated rows 600 pooled", (rr,), 3)
    report("(a) repeated rows 300 x 300", (rr[::2], rr[1::2]), 3)
    for n in (60, 200, 600):
        z = np.random.default_rng(n).normal(size=(n, d))
        report(f"(b) continuous {n} pooled", (z,), args.rounds)
        report(f"(b) continuous {n // 2} x {n // 2}", (z[: n // 2], z[n // 2 :]), args.rounds)

    a_rows, b_rows = rr[:300], rr[300:]
    new_value = mmd.mmd2_unbiased(a_rows, b_rows)
    t_new = best_of(lambda: mmd.mmd2_unbiased(a_rows, b_rows), 5)
    with mock.patch.object(_distances, "_sq_distances", baseline_sq_distances):
        old_value = mmd.mmd2_unbiased(a_rows, b_rows)
        t_old = best_of(lambda: mmd.mmd2_unbiased(a_rows, b_rows), 3)
    print(
        f"{'(c) mmd2_unbiased, data of (a)':34s} old {t_old * 1e3:9.3f} ms  new {t_new * 1e3:8.3f} ms  "
        f"old/new {t_old / t_new:7.2f}  |diff| {abs(new_value - old_value):.1e}"
    )


if __name__ == "__main__":
    main()
