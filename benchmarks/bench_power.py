"""Certified power per sample: certify's default test vs the paper's logistic test vs the oracle.

Runs the known-epsilon grid (dispersed prototypes, 40 pairs, Gaussian and Laplace at the Sec. 6.5
certificate epsilons, the anisotropic Gaussian at the App. C epsilons, n in {30, 100, 300}) with
the three certificate routes, each on its own sample, protocol and ledger, and prints the
fraction of pairs with a positive bound side by side, the first epsilon_g where at least half
the pairs are positive, and the validity count (certificates above their exact reference).

Usage: ``python benchmarks/bench_power.py [--repetitions R] [--workers W] [--out DIR] [--quick]``
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from typing import cast

import pandas as pd

from certify.benchmark.ceiling import plug_in_ceiling
from certify.benchmark.grid import (
    APPENDIX_EPSILONS,
    CERTIFICATE_EPSILONS,
    SAMPLE_SIZES,
    Setting,
    read_results,
    run_grid,
)
from certify.benchmark.mechanisms import MechanismFamily

ROUTES = {"certificate_default": "certify", "certificate_learned": "paper", "certificate_oracle": "oracle"}


def settings(repetitions: int, quick: bool) -> list[Setting]:
    """The benchmark settings with all three certificate routes."""
    out = []
    grids: dict[str, tuple[float, ...]] = {
        "gaussian": CERTIFICATE_EPSILONS, "laplace": CERTIFICATE_EPSILONS, "anisotropic": APPENDIX_EPSILONS,
    }
    sizes = (30, 100) if quick else SAMPLE_SIZES
    for fam, eps_grid in grids.items():
        for eps in eps_grid:
            for n in sizes:
                for rep in range(repetitions):
                    out.append(Setting("power_compare", "dispersed", cast(MechanismFamily, fam), eps, n, rep,
                                       certificates=True, default_test=True))
    return out


def print_ceilings(quick: bool) -> None:
    """The plug-in ceiling and the oracle's best-threshold fraction of every Gaussian cell."""
    rows = []
    grids = {"gaussian": CERTIFICATE_EPSILONS, "anisotropic": APPENDIX_EPSILONS}
    for fam, eps_grid in grids.items():
        for n in (30, 100) if quick else SAMPLE_SIZES:
            for eps in eps_grid:
                if eps > 0:
                    ceiling, oracle = plug_in_ceiling(fam, eps, n)
                    rows.append({"family": fam, "n": n, "epsilon_g": eps, "ceiling": round(ceiling, 3),
                                 "oracle_best_threshold": round(oracle, 3)})
    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", 500)
    print("expected fraction of pairs positive: plug-in ceiling vs the true direction (best thresholds)")
    print(pd.DataFrame(rows).to_string(index=False))


def main() -> None:
    """Run the grid and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repetitions", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", default=None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--ceiling-only", action="store_true",
                        help="print the plug-in ceiling of every Gaussian cell and stop (seconds)")
    args = parser.parse_args()
    if args.ceiling_only:
        print_ceilings(args.quick)
        return
    out = args.out or tempfile.mkdtemp(prefix="bench-power-")
    start = time.perf_counter()
    df = read_results(run_grid(settings(args.repetitions, args.quick), out, workers=args.workers))
    seconds = time.perf_counter() - start
    cert = df[df["route"].isin(list(ROUTES))].copy()
    cert["test"] = cert["route"].map(ROUTES)
    cert["positive"] = cert["value"] > 0
    frac = cert.groupby(["noise_family", "n_samples", "epsilon_g", "test"])["positive"].mean().unstack("test")
    frac = frac[["certify", "paper", "oracle"]]
    frac["ceiling"] = [
        plug_in_ceiling(fam, eps, n)[0] if fam in ("gaussian", "anisotropic") and eps > 0 else math.nan
        for fam, n, eps in frac.index
    ]
    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", 500)
    print(f"fraction of 40 pairs with a positive bound (mean over {args.repetitions} repetition(s))")
    print(frac.round(3).to_string())
    rows = []
    for (fam, n), g in frac.groupby(level=[0, 1]):
        rec: dict[str, object] = {"family": fam, "n": n}
        for test in ("certify", "paper", "oracle", "ceiling"):
            ok = g[g[test] >= 0.5].index.get_level_values("epsilon_g")
            rec[test] = float(min(ok)) if len(ok) else math.nan
        rows.append(rec)
    print("\nfirst epsilon_g with at least half the pairs positive")
    print(pd.DataFrame(rows).to_string(index=False))
    exceed = cert[cert["value"] > cert["exact_epsilon"]]
    possible = cert[cert["failure_possible"].astype(bool)]
    print(f"\nvalidity: {len(exceed)} of {len(cert)} certificates above their exact reference "
          f"({len(possible)} where a failure was numerically possible)")
    med = cert[cert["positive"]].groupby(["noise_family", "test"])["value"].median().unstack("test")
    print("\nmedian positive epsilon_lower per family\n" + med.round(3).to_string())
    timing = cert.groupby("test").size()
    reps = len(df["repetition"].unique())
    print(f"\n{reps} repetition(s), {timing.sum()} certificates, {seconds:.0f} s; out {out}")


if __name__ == "__main__":
    main()
