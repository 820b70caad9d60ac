"""One fixed pair of a product-Laplace embedding mechanism, certified as a user would, beside DP-Sniper.

The case DP-Sniper audits with one pair (Bichsel et al., IEEE S&P 2021; its figures below are
from its code run on this case, 95%, median of 3 seeds): prototypes are the unit-normalised rows
of ``np.random.default_rng(0).standard_normal((400, 512))``, identities 0 and 1, and the
mechanism releases ``c_i + Laplace(b)^512`` with ``b = ||c_0 - c_1||_1 / epsilon``, so the pair's
exact epsilon is ``epsilon``. ``certify.benchmark``'s Laplace mechanism on a prototype set of
these two rows is exactly that law (its ``Delta_1`` is their L1 distance).

Each run draws 5e4 outputs per identity (1e5 calls in all, DP-Sniper's budget) from
``default_rng(seed)``, builds an ``EmbeddingTable``, splits it (``--dev-fraction``), chooses a
test on the development rows with ``FixedTest.select("certify", ..., threshold="max_bound")``
at the 95% plan of a one-test protocol, seals it with a fresh ledger in a temporary folder and
evaluates it once. It prints, per seed, the certified ``epsilon_lower``, the chosen family and
threshold, and the wall and CPU seconds of each stage, with BLAS and OpenMP pools held to one
thread (the whole audit on one core).

``--families`` also prints, per candidate family, its development criterion (the expected
certified bound of its out-of-fold scores at the best cut) and out-of-fold AUC, with its CPU
seconds; ``--profile`` prints the selection's cProfile (top functions by cumulative time);
``--oracle`` certifies the exact log-likelihood ratio with the same threshold rule on a sample of
its own (no fitting; the reference a fitted score can approach).

Usage: ``python benchmarks/bench_embedding_pair.py [--epsilons 2 8] [--seeds 0 1 2 3 4]
[--dev-fraction F] [--families] [--profile] [--oracle]``
"""

from __future__ import annotations

import argparse
import cProfile
import io
import math
import pstats
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

import certify as cf
from certify.benchmark.mechanisms import Laplace
from certify.benchmark.prototypes import sensitivities
from certify.protocol import fixed
from certify.protocol.criterion import best_cut
from certify.protocol.families import CERTIFY_CANDIDATES, BoundPlan, estimator_for, max_bound_cut
from certify.stats.roc import auc, out_of_fold_scores

PER_IDENTITY = 50_000
"""Outputs per identity: 1e5 calls in all, DP-Sniper's budget."""

CONFIDENCE_LEVEL = 0.95

DPSNIPER = {8.0: 0.36, 2.0: -0.18}
"""DP-Sniper's certified bound on this case at 1e5 calls (95%, median of 3 seeds)."""

PAIR = cf.Pair("id0", "id1")


def mechanism(epsilon: float) -> Laplace:
    """``c_i + Laplace(||c_0 - c_1||_1 / epsilon)^512`` on the first two prototypes."""
    raw = np.random.default_rng(0).standard_normal((400, 512))
    prototypes = raw / np.linalg.norm(raw, axis=1, keepdims=True)
    return Laplace(sensitivities(prototypes[:2], name="dpsniper-pair"), epsilon)


class _Clock:
    """Wall and CPU seconds of named stages."""

    def __init__(self) -> None:
        self.seconds: dict[str, tuple[float, float]] = {}

    def run(self, stage: str, work: Callable[[], Any]) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        out = work()
        self.seconds[stage] = (time.perf_counter() - wall, time.process_time() - cpu)
        return out


def build(mech: Laplace, seed: int) -> cf.EmbeddingTable:
    """The table of 5e4 outputs per identity, drawn from ``default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    rows = np.vstack([mech.sample(0, PER_IDENTITY, rng), mech.sample(1, PER_IDENTITY, rng)])
    return cf.EmbeddingTable.from_arrays(np.repeat([PAIR.a, PAIR.b], PER_IDENTITY), rows, normalize=False)


def certify_once(test: cf.FixedTest, reserved: cf.ReservedSplit, folder: str, name: str) -> float:
    """Seal a one-test protocol with a fresh ledger and evaluate it once."""
    protocol = cf.Protocol(name=name, confidence_level=CONFIDENCE_LEVEL, delta=0.0)
    protocol.register(test)
    sealed = protocol.seal(reserved, ledger=cf.Ledger(Path(folder) / f"{name}.ledger"))
    return float(sealed.evaluate().certificates[0].epsilon_lower)


def families(development: cf.EmbeddingTable, plan: BoundPlan) -> None:
    """Each candidate family's development criteria, out-of-fold AUC and CPU seconds.

    The folds are those ``FixedTest.select`` uses (``folds="auto"``: 2 at these row counts; 5
    where the library has no automatic choice). "expected" is the expected bound at the best
    cut (:func:`max_bound_cut`), "pessimistic" the bound at pessimistic development rates
    (:func:`best_cut` at ``dev_level=0.05``), which ``threshold="max_bound"`` ranks by.
    """
    x_a, x_b = development.rows(PAIR.a), development.rows(PAIR.b)
    auto_rows = getattr(fixed, "AUTO_FOLDS_ROWS", None)
    folds = 2 if auto_rows is not None and min(len(x_a), len(x_b)) >= auto_rows else 5
    for fam in CERTIFY_CANDIDATES:
        cpu = time.process_time()
        est = estimator_for(fam, development, PAIR)
        oof = out_of_fold_scores(x_a, x_b, est, folds=folds, seed=0, response="decision_function")
        s0, s1 = oof[: len(x_a)], oof[len(x_a) :]
        a = auc(s0, s1)
        o = 1.0 if a >= 0.5 else -1.0
        _, expected = max_bound_cut(o * s0, o * s1, plan.n_class0, plan.n_class1, plan.alpha_per_rate)
        *_, pessimistic = best_cut(s0, s1, plan.n_class0, plan.n_class1, plan.alpha_per_rate, dev_level=0.05)
        print(f"    {fam:20s} expected {expected:6.3f}  pessimistic {pessimistic:6.3f}  "
              f"AUC {max(a, 1 - a):.4f}  {time.process_time() - cpu:5.1f} s CPU ({folds} folds)")


def run(epsilon: float, seed: int, dev_fraction: float, *, show_families: bool, profile: bool,
        oracle: bool) -> dict[str, Any]:
    """One audit of the case; its figures."""
    mech = mechanism(epsilon)
    clock = _Clock()
    table = clock.run("build", lambda: build(mech, seed))
    split = clock.run("split", lambda: table.split(dev_fraction=dev_fraction, seed=seed))
    plan = BoundPlan.for_pair(split.reserved, PAIR, 1, CONFIDENCE_LEVEL)
    profiler = cProfile.Profile() if profile else None
    if profiler is not None:
        profiler.enable()
    test = clock.run("select", lambda: cf.FixedTest.select(
        "certify", split.development, PAIR, plan=plan, threshold="max_bound"))
    if profiler is not None:
        profiler.disable()
    with tempfile.TemporaryDirectory() as folder:
        lower = clock.run("evaluate", lambda: certify_once(test, split.reserved, folder, "pair"))
        oracle_lower = None
        if oracle:
            # the exact score on a sample of its own (a reserved split is evaluated once, ever)
            other = build(mech, seed + 10_000).split(dev_fraction=dev_fraction, seed=seed)

            def exact(x: NDArray[np.float64]) -> NDArray[np.float64]:
                return mech.log_likelihood_ratio(x, 0, 1)

            fixed = cf.FixedTest.from_score(exact, other.development, PAIR, name="oracle",
                                            threshold="max_bound", plan=plan)
            oracle_lower = certify_once(fixed, other.reserved, folder, "oracle")
    if profiler is not None:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(25)
        print(out.getvalue())
    if show_families:
        families(split.development, plan)
    return {"lower": lower, "test": test, "seconds": clock.seconds, "oracle": oracle_lower}


def line(seed: int, r: dict[str, Any], total: float) -> str:
    """One seed's row: bound, family, oriented threshold, CPU and wall seconds per stage."""
    s, test = r["seconds"], r["test"]
    extra = f"  {r['oracle']:6.3f}" if r["oracle"] is not None else ""
    return (f" {seed:4d}  {r['lower']:13.3f}  {test.name:20s} {test.orientation * test.threshold:+9.3f}"
            f"  {s['build'][1]:5.1f}  {s['split'][1]:5.1f}  {s['select'][0]:6.1f}/{s['select'][1]:<6.1f}"
            f"   {s['evaluate'][0]:6.1f}/{s['evaluate'][1]:<6.1f}   {total:6.1f}{extra}")


def main() -> None:
    """Run the seeds and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[2.0, 8.0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--dev-fraction", type=float, default=0.5)
    parser.add_argument("--families", action="store_true")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--oracle", action="store_true")
    args = parser.parse_args()
    print(f"{PER_IDENTITY:,} outputs per identity (1e5 calls), dev_fraction {args.dev_fraction}, "
          f"{CONFIDENCE_LEVEL:.0%}, one core (BLAS/OpenMP pools at 1 thread)")
    with threadpool_limits(1):
        for eps in args.epsilons:
            print(f"\nepsilon = {eps:g} (exact); DP-Sniper at 1e5 calls: {DPSNIPER.get(eps, math.nan):.2f}")
            print(" seed  epsilon_lower  family                threshold  build  split  select wall/CPU"
                  "  evaluate wall/CPU  total CPU" + ("  oracle" if args.oracle else ""))
            lowers, totals = [], []
            for seed in args.seeds:
                r = run(eps, seed, args.dev_fraction, show_families=args.families, profile=args.profile,
                        oracle=args.oracle)
                totals.append(sum(cpu for _, cpu in r["seconds"].values()))
                lowers.append(r["lower"])
                print(line(seed, r, totals[-1]), flush=True)
            print(f" mean  {statistics.fmean(lowers):13.3f}  (min {min(lowers):.3f}, max {max(lowers):.3f}); "
                  f"total CPU per audit: mean {statistics.fmean(totals):.1f} s, max {max(totals):.1f} s")

if __name__ == "__main__":
    main()
