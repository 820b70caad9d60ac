"""The paper's Table 2 workload for one condition, timed per route (issue target: < 30 s on 2 cores).

400 identities x 100 rows x 512 dimensions (face-like: normalized prototypes plus noise,
L2-normalized rows). Pairs 1-100 get every route and a 10^4-permutation MMD test; pairs
101-500 GaussMech and MMD-TV; pairs 101-200 ROC-HT out of fold.

Run: .venv/bin/python benchmarks/bench_routes.py [--jobs 2]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import certify as cf


def face_like_table(seed: int = 0) -> cf.EmbeddingTable:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((400, 512))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    rows = np.repeat(centres, 100, axis=0) + 0.04 * rng.standard_normal((40_000, 512))
    labels = np.repeat([f"id{i:03d}" for i in range(400)], 100)
    return cf.EmbeddingTable.from_arrays(labels, rows, normalize=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    table = face_like_table()
    pairs = cf.sample_pairs(table.identities, 500, seed=0)
    # warm the compiled KDE kernel so the timing is of the work, not of compilation
    t0 = time.perf_counter()
    cf.audit_pairs(table, pairs[:1], ("kde_lr",))
    compile_s = time.perf_counter() - t0

    start = time.perf_counter()
    first = cf.audit_pairs(
        table, pairs[:100], ("gauss_mech", "kde_lr", "mmd_tv", "roc_oof", "mmd_permutation"),
        permutations=10_000, n_jobs=args.jobs,
    )
    rest = cf.audit_pairs(table, pairs[100:], ("gauss_mech", "mmd_tv"), n_jobs=args.jobs)
    roc = cf.audit_pairs(table, pairs[100:200], ("roc_oof",), n_jobs=args.jobs)
    total = time.perf_counter() - start

    shares: dict[str, float] = {}
    for audit in (first, rest, roc):
        for method, secs in audit.timings.items():
            shares[method] = shares.get(method, 0.0) + secs
    print(f"KDE kernel compile (once per process, excluded): {compile_s:.1f} s")
    print(f"Table 2 workload, n_jobs={args.jobs}: {total:.1f} s wall (target < 30 s)")
    print("route time (seconds of worker time, summed over pairs):")
    for method, secs in sorted(shares.items(), key=lambda kv: -kv[1]):
        print(f"  {method:16s} {secs:7.2f}")
    for audit in (first, rest, roc):
        for summary, corners in audit.summaries():
            print(
                f"  [{summary.status}] {summary.method}: median {summary.value_name} = "
                f"{summary.median:.4g} over {summary.count} pairs (+inf {summary.n_infinite}"
                f"{'' if corners is None else f', exact corners {corners}'})"
            )


if __name__ == "__main__":
    main()
