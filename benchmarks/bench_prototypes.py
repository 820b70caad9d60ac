"""Speed of the exact all-pairs sensitivity check (paper Eq. 17).

Compares the vectorized row sweep used by ``certify.benchmark.prototypes.sensitivities`` with a
plain per-pair Python loop on a subset (same process, same data), then times the full
400-prototype sets (79,800 pairs x 512 coordinates) and the benchmark pair selection.

Run: .venv/bin/python benchmarks/bench_prototypes.py
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from certify.benchmark.pairs import benchmark_pairs
from certify.benchmark.prototypes import clustered, dispersed, pairwise_distances, sensitivities

SUBSET = 120  # 7,140 pairs: enough for a stable loop timing, short enough to run in seconds
REPEATS = 5


def loop_baseline(x: NDArray[np.float64]) -> tuple[float, float]:
    """Delta_1 and Delta_2 by a plain per-pair Python loop."""
    best1 = best2 = 0.0
    n = x.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            diff = x[i] - x[j]
            best1 = max(best1, float(np.abs(diff).sum()))
            best2 = max(best2, float(np.sqrt((diff * diff).sum())))
    return best1, best2


def best_of(fn: Callable[[], object], repeats: int = REPEATS) -> float:
    """Minimum wall time of ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    full = dispersed()
    x = np.array(full.prototypes[:SUBSET])
    pairs = SUBSET * (SUBSET - 1) // 2

    ps = sensitivities(x)
    d1, d2 = loop_baseline(x)
    assert abs(ps.delta_1 - d1) <= 1e-12 * d1 and abs(ps.delta_2 - d2) <= 1e-12 * d2

    t_loop = best_of(lambda: loop_baseline(x), repeats=2)
    t_vec = best_of(lambda: sensitivities(x))
    print(f"subset: {SUBSET} prototypes, {pairs} pairs, d = {x.shape[1]}")
    print(f"  per-pair Python loop     {t_loop * 1e3:9.1f} ms")
    print(f"  vectorized sensitivities {t_vec * 1e3:9.1f} ms")
    print(f"  speed-up                 {t_loop / t_vec:9.1f} x")

    xf = np.array(full.prototypes)
    n_full = xf.shape[0] * (xf.shape[0] - 1) // 2
    t_full = best_of(lambda: sensitivities(xf))
    t_l1 = best_of(lambda: pairwise_distances(xf, 1))
    est_loop = t_loop / pairs * n_full
    print(f"full set: {xf.shape[0]} prototypes, {n_full} pairs, d = {xf.shape[1]}")
    print(f"  sensitivities (L1 + L2, exact, attaining pairs) {t_full * 1e3:8.1f} ms")
    print(f"  pairwise_distances(p=1)                         {t_l1 * 1e3:8.1f} ms")
    print(f"  per-pair loop, extrapolated from the subset     {est_loop * 1e3:8.1f} ms")
    print(f"  speed-up vs extrapolated loop                   {est_loop / t_full:8.1f} x")

    t_pairs = best_of(lambda: benchmark_pairs(full))
    t_clustered = best_of(clustered, repeats=2)
    print(f"  benchmark_pairs (40 pairs)                      {t_pairs * 1e3:8.1f} ms")
    print(f"  clustered() generation + sensitivities          {t_clustered * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
