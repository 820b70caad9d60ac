"""KDE-LR speed: the compiled grid kernel against a per-coordinate scipy.stats.gaussian_kde loop.

Run with ``.venv/bin/python benchmarks/bench_kde.py [--pairs 4] [--n 100] [--d 512] [--cache 5]``.

With ``--cache K``: instead, the whole-process cost of a first KDE-LR call in a new process, K
times each with an empty numba cache folder (the kernel compiles and is saved) and then with the
folder it left (the kernel is loaded), against a process that only imports certify.stats.kde;
medians of wall and CPU seconds.

Prints, in one process on the same data and the same grids:
- the first-call time of the compiled kernel (numba JIT compile plus one pair),
- seconds per pair for the scipy baseline and for ``kde_lr_per_coordinate`` (one pair at a time,
  Silverman bandwidths included) and ``kde_lr_pairs`` (all pairs in one call), on 1 and 2 threads,
- the speed ratios, and the largest relative difference between the per-coordinate scores.

The baseline runs with one BLAS thread (its best case here: with two, each 1x1 triangular
solve inside gaussian_kde costs milliseconds of thread hand-off).
Both wall-clock and CPU seconds are reported: on a shared machine the wall clock of a
single-threaded run is inflated by other processes, while CPU time is not.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from numpy.typing import NDArray
from scipy.stats import gaussian_kde
from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

from certify.stats import kde


def scipy_per_coordinate(
    x_a: NDArray[np.float64],
    x_b: NDArray[np.float64],
    h_a: NDArray[np.float64],
    h_b: NDArray[np.float64],
    alpha: float = 0.01,
    grid_points: int = 201,
    floor: float = 1e-12,
) -> NDArray[np.float64]:
    """Baseline: one gaussian_kde per identity and coordinate, bandwidth matched to h."""
    out = np.empty(x_a.shape[1])
    for j in range(x_a.shape[1]):
        a, b = x_a[:, j], x_b[:, j]
        h_max = max(h_a[j], h_b[j])
        lo = min(a.min(), b.min()) - 3.0 * h_max
        hi = max(a.max(), b.max()) + 3.0 * h_max
        grid = np.linspace(lo, hi, grid_points)
        # gaussian_kde's kernel standard deviation is bw_method * std(ddof=1) in 1-D.
        kde_a = gaussian_kde(a, bw_method=h_a[j] / a.std(ddof=1))
        kde_b = gaussian_kde(b, bw_method=h_b[j] / b.std(ddof=1))
        u = alpha / (hi - lo)
        p_a = np.maximum((1.0 - alpha) * kde_a(grid) + u, floor)
        p_b = np.maximum((1.0 - alpha) * kde_b(grid) + u, floor)
        out[j] = np.max(np.abs(np.log(p_a) - np.log(p_b)))
    return out


def timed(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, float, float]:
    """Run fn once; return its value, wall seconds and process CPU seconds."""
    w0, c0 = time.perf_counter(), time.process_time()
    value = fn(*args, **kwargs)
    return value, time.perf_counter() - w0, time.process_time() - c0


_FIRST_CALL = (
    "import numpy as np; from certify.stats import kde; r = np.random.default_rng(0); "
    "kde.kde_lr_pairs([r.normal(size=(30, 512)) for _ in range(4)], [(0, 1), (2, 3)])"
)


def process_seconds(code: str, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of a new Python process running ``code``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def cache_effect(rounds: int) -> None:
    """Print medians of cold (compile) and warm (cache load) first-call process times."""
    runs: dict[str, list[tuple[float, float]]] = {"import only": [], "cold cache": [], "warm cache": []}
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as folder:
            env = {**os.environ, "NUMBA_CACHE_DIR": folder}
            runs["import only"].append(process_seconds("from certify.stats import kde", env))
            runs["cold cache"].append(process_seconds(_FIRST_CALL, env))
            runs["warm cache"].append(process_seconds(_FIRST_CALL, env))
    for name, values in runs.items():
        wall = float(np.median([w for w, _ in values]))
        cpu = float(np.median([c for _, c in values]))
        print(f"{name:12s} {wall:5.2f} s wall {cpu:5.2f} s CPU (median of {rounds})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--d", type=int, default=512)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=int, metavar="K", help="measure the on-disk kernel cache, K rounds")
    args = parser.parse_args()
    if args.cache:
        cache_effect(args.cache)
        return
    rng = np.random.default_rng(args.seed)
    rows = [rng.laplace(size=(args.n, args.d)) for _ in range(2 * args.pairs)]
    pairs = [(2 * i, 2 * i + 1) for i in range(args.pairs)]
    print(f"n={args.n} d={args.d} pairs={args.pairs} cores={(os.cpu_count() or 1)}")

    _, wall, _ = timed(kde.kde_lr_per_coordinate, rows[0][:5], rows[1][:5])
    print(f"first call (JIT compile + tiny pair): {wall:.2f} s wall")

    hs = kde.identity_bandwidths(rows)
    base_wall = base_cpu = 0.0
    baseline = []
    for a, b in pairs:
        # One BLAS thread: gaussian_kde's tiny triangular solves are much slower with more.
        with threadpool_limits(limits=1):
            value, w, c = timed(scipy_per_coordinate, rows[a], rows[b], hs[a], hs[b])
        baseline.append(value)
        base_wall += w
        base_cpu += c
    base_wall /= len(pairs)
    base_cpu /= len(pairs)
    print(f"scipy gaussian_kde loop: {base_wall:.3f} s/pair wall, {base_cpu:.3f} s/pair CPU")

    for threads in (1, 2):
        if threads > (os.cpu_count() or 1):
            continue
        numba.set_num_threads(threads)
        single_wall = single_cpu = 0.0
        worst = 0.0
        for (a, b), ref in zip(pairs, baseline, strict=True):
            value, w, c = timed(kde.kde_lr_per_coordinate, rows[a], rows[b])
            single_wall += w
            single_cpu += c
            got = np.asarray(value)
            worst = max(worst, float(np.max(np.abs(got - ref) / np.abs(ref))))
        single_wall /= len(pairs)
        single_cpu /= len(pairs)
        batch, w, c = timed(kde.kde_lr_pairs, rows, pairs, bandwidths=hs)
        batch_wall, batch_cpu = w / len(pairs), c / len(pairs)
        sums = np.array([np.sum(r) for r in baseline])
        batch_rel = float(np.max(np.abs(np.asarray(batch) - sums) / sums))
        print(
            f"threads={threads}: per-pair call {single_wall * 1e3:.1f} ms wall "
            f"({single_cpu * 1e3:.1f} ms CPU); batched {batch_wall * 1e3:.1f} ms/pair wall "
            f"({batch_cpu * 1e3:.1f} ms CPU)"
        )
        print(
            f"  ratio scipy/ours: per-pair {base_wall / single_wall:.1f}x wall "
            f"({base_cpu / single_cpu:.1f}x CPU), batched {base_wall / batch_wall:.1f}x wall "
            f"({base_cpu / batch_cpu:.1f}x CPU)"
        )
        print(f"  max relative difference: per-coordinate {worst:.2e}, pair sums {batch_rel:.2e}")


if __name__ == "__main__":
    main()
