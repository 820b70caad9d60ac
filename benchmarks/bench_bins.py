"""Placing values among bin edges: :func:`certify.stats._bins.bin_index` against ``np.searchsorted``.

Binned scores (the binned, product and histogram families of a mechanism audit) place every
development call's coordinate among a score's edges, many times in an audit. Each case below is
one such placement, as the audits of DP-Sniper's mechanisms see them; both functions run on
the same arrays in this process, best of ``--repeat`` runs, and the results are checked equal.

- ``laplace``: 128 quantile edges of Laplace values (PrefixSum's differences, NoisyHist2's
  counts), a strided column of 300,000 calls;
- ``placeholder``: 34 edges of a sparse vector's answers, most of them one placeholder value
  far below the others (SparseVectorTechnique3), 150,000 calls;
- ``few``: 4,000 calls, where the binary search is kept (below 8,192).

Usage: ``python benchmarks/bench_bins.py [--repeat R]``
"""

from __future__ import annotations

import argparse
import functools
import timeit

import numpy as np
from numpy.typing import NDArray

from certify.stats._bins import bin_index

Case = tuple[NDArray[np.float64], NDArray[np.float64]]


def _cases(rng: np.random.Generator) -> dict[str, Case]:
    table = rng.laplace(scale=10.0, size=(300_000, 10))
    column = table[:, 3]
    laplace = np.unique(np.quantile(column, np.linspace(0, 1, 130)[1:-1]))
    answers = np.where(rng.random(150_000) < 0.8, -1000.0, rng.laplace(scale=20.0, size=150_000))
    inner = np.quantile(answers[answers > -1000.0], np.linspace(0, 1, 34)[1:-1])
    edges = np.unique(np.concatenate([inner, [-1000.0, np.nextafter(-1000.0, 0)]]))
    few = rng.laplace(size=4_000)
    return {
        "laplace": (laplace, column),
        "placeholder": (edges, answers),
        "few": (np.unique(np.quantile(few, np.linspace(0, 1, 66)[1:-1])), few),
    }


def main() -> None:
    """Print each case's time with both functions and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    head = ("case", "values", "edges", "searchsorted ms", "bin_index ms", "ratio")
    print("{:12s} {:>8s} {:>6s} {:>16s} {:>13s} {:>6s}".format(*head))
    for name, (edges, values) in _cases(np.random.default_rng(0)).items():
        expected = np.searchsorted(edges, values, side="right")
        if not np.array_equal(bin_index(edges, values), expected):
            raise SystemExit(f"{name}: bin_index differs from np.searchsorted")
        search = min(timeit.repeat(
            functools.partial(np.searchsorted, edges, values, side="right"), number=1, repeat=args.repeat
        ))
        table = min(timeit.repeat(functools.partial(bin_index, edges, values), number=1, repeat=args.repeat))
        print(f"{name:12s} {values.size:8d} {edges.size:6d} {1e3 * search:16.2f} {1e3 * table:13.2f} "
              f"{table / search:6.2f}")


if __name__ == "__main__":
    main()
