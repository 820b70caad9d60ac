"""Known implementation bugs and current DP releases: what certify proves, at what budget, at what cost.

Sections (``--section``, default all but ``libraries`` and ``sidebyside``):

- ``textbook``: the textbook Laplace mechanism on doubles (claim 0.1, inputs 0 and 1) at 1e6,
  1e7 and 4e7 calls; DP-Sniper's floating-point experiment certified 0.2432 (90%, ~4e8 calls);
- ``bugs``: every mechanism of ``certify.blackbox.BUGS`` at 1e7 calls, three seeds, 95%;
- ``curator``: the curator attack at p = 1e-2 ... 1e-6: the smallest budget (on a grid of about
  1/p times 20, 50, 100, ...) that refutes it in three of three seeds, and that budget's reach;
- ``validity``: correct float releases (OpenDP's Laplace and Gaussian, python-dp's Laplace,
  Laplace noise snapped to 2**-32) over 20 seeds: certificates above the claim, against the
  rate the level allows;
- ``cost``: the share of a correct-mechanism audit's CPU seconds spent in the representation
  families (timed inside the audit);
- ``libraries``: each library's Laplace and Gaussian release on Delta-Siege's grid
  (benchmarks/libraries.py), one audit per cell;
- ``sidebyside``: certify on the cells Delta-Siege was run at here, at its budget.

Every audit has its own ledger in a temporary folder. Usage::

    python benchmarks/bench_bugs.py [--section NAME ...] [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.stats import binom

import certify as cf
from certify.blackbox import BUGS, curator_attack
from certify.blackbox.reach import smallest_event_probability
from certify.protocol.ledger import evaluation_share

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import libraries

DPSNIPER_FLOAT = 0.2432


def audit(mech: Any, pairs: Sequence[tuple[Any, Any]], calls: int, seed: int, delta: float = 0.0,
          tests: str = "certify") -> tuple[cf.MechanismAudit, float]:
    """One first evaluation on its own ledger: the audit and its CPU seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        start = time.process_time()
        result = cf.audit_mechanism(
            mech, inputs=[(list(a), list(b)) for a, b in pairs], calls=calls, seed=seed,
            delta=delta, tests=tests, ledger=cf.Ledger(os.path.join(tmp, "bench.ledger")),
            progress=False,
        )
        return result, time.process_time() - start


def verdict(result: cf.MechanismAudit, epsilon: float, delta: float) -> str:
    """Refuted or Inconclusive for the claim (epsilon, delta)."""
    return type(cf.refute(cf.Claim(epsilon=epsilon, delta=delta), result.family)).__name__


def textbook(quick: bool) -> None:
    """The textbook Laplace mechanism at growing budgets."""
    bug = BUGS["TextbookLaplace"]
    print("\n## Textbook Laplace on doubles (claim 0.1, inputs 0 and 1)\n")
    print(f"DP-Sniper (bit patterns, 90%, about 4e8 calls): {DPSNIPER_FLOAT}\n")
    print("| calls | epsilon_lower (95%) | level used | event | verdict | CPU s |")
    print("|---|---|---|---|---|---|")
    for calls in (10**6, 10**7) if quick else (10**6, 10**7, 4 * 10**7):
        result, seconds = audit(bug, bug.input_pairs, calls, seed=0)
        print(f"| {calls:.0e} | {result.epsilon_lower:.4f} | {result.level_used:.4f} | "
              f"{result.chosen} | {verdict(result, 0.1, 0.0)} | {seconds:.1f} |", flush=True)


def bugs(quick: bool) -> None:
    """Every BUGS mechanism at 1e7 calls, three seeds."""
    calls = 10**6 if quick else 10**7
    print(f"\n## BUGS at {calls:.0e} calls, 95%, three seeds\n")
    print("| mechanism | claim | exact | seed 10 | seed 11 | seed 12 | refuted | event (seed 10) | "
          "reach (seed 10) | CPU s (mean) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, bug in BUGS.items():
        bounds, refuted, seconds, event, reach = [], 0, 0.0, "", 1.0
        for seed in (10, 11, 12):  # not the textbook section's seed: a split is spent once
            result, sec = audit(bug, bug.input_pairs, calls, seed, delta=bug.claimed_delta)
            bounds.append(result.epsilon_lower)
            refuted += verdict(result, bug.claimed_epsilon, bug.claimed_delta) == "Refuted"
            seconds += sec / 3
            if seed == 10:
                event = result.chosen
                reach = smallest_event_probability(result, bug.claimed_epsilon)
        claim = f"({bug.claimed_epsilon:g}, {bug.claimed_delta:g})"
        cells = " | ".join(f"{b:.3f}" for b in bounds)
        print(f"| {name} | {claim} | {bug.true_epsilon:.4g} | {cells} | {refuted}/3 | {event} | "
              f"{reach:.2g} | {seconds:.1f} |", flush=True)


def curator(quick: bool) -> None:
    """The smallest budget that refutes the curator attack in three seeds of three, per p."""
    print("\n## Curator attack: calls needed as the leak's probability p falls\n")
    print("| p | smallest budget refuting 3/3 | calls x p | bounds | reach of that budget | "
          "budgets tried |")
    print("|---|---|---|---|---|---|")
    grid = (20, 50, 100, 150, 200, 300, 500, 1000)
    for p in (1e-2, 1e-3, 1e-4) if quick else (1e-2, 1e-3, 1e-4, 1e-5, 1e-6):
        bug = curator_attack(p)
        tried = []
        # below 1e-4 the budgets start at 100 / p: the larger p needed 500 / p or more
        for m in grid if p >= 1e-4 else grid[2:]:
            calls = max(int(m / p), 4000)
            if calls > 4 * 10**8:
                print(f"| {p:g} | not within {tried[-1]} | | | | {', '.join(tried)} |")
                break
            tried.append(f"{calls:.0e}")
            results = []
            for seed in range(3):
                result, _ = audit(bug, bug.input_pairs, calls, seed)
                results.append(result)
                if verdict(result, 0.1, 0.0) != "Refuted":
                    break
            if len(results) == 3 and all(verdict(r, 0.1, 0.0) == "Refuted" for r in results):
                reach = smallest_event_probability(results[0], 0.1)
                bounds = ", ".join(f"{r.epsilon_lower:.2f}" for r in results)
                print(f"| {p:g} | {calls:.2e} | {calls * p:.0f} | {bounds} | {reach:.2g} | "
                      f"{', '.join(tried)} |", flush=True)
                break
        else:
            print(f"| {p:g} | not within {tried[-1] if tried else '-'} | | | | {', '.join(tried)} |")


def snapped_laplace(x: NDArray[Any], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Laplace noise of scale 1 rounded to 2**-32: adding it to an integer is exact (1-DP)."""
    return x[0] + np.round(rng.laplace(0.0, 1.0, size=n) * 2.0**32) / 2.0**32


def snapped_vector(x: NDArray[Any], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Ten snapped Laplace releases of scale 10 of one value: exactly 1-DP."""
    noise = np.round(rng.laplace(0.0, 10.0, size=(n, 10)) * 2.0**32) / 2.0**32
    return x[0] + noise


def _correct() -> list[tuple[str, Callable[..., Any], float, float, int]]:
    """Correct releases: name, mechanism, claimed epsilon and delta, calls per audit."""
    out: list[tuple[str, Callable[..., Any], float, float, int]] = [
        ("snapped numpy Laplace (eps 1)", snapped_laplace, 1.0, 0.0, 200_000),
    ]
    for name, eps, delta, calls in (("opendp-laplace", 1.0, 0.0, 100_000),
                                    ("opendp-gaussian", 1.0, 1e-6, 100_000),
                                    ("pydp-laplace", 1.0, 0.0, 200_000)):
        try:
            out.append((f"{libraries.version(name)} {name.split('-')[1]} (eps {eps:g})",
                        libraries.mechanism(name, eps, delta), eps, delta, calls))
        except ImportError as exc:
            print(f"skipped {name}: {exc}")
    return out


def validity(quick: bool) -> None:
    """Correct releases over 20 seeds: how often a certificate exceeds the claim."""
    seeds = 5 if quick else 20
    alpha = 0.05 * evaluation_share(1)
    print(f"\n## Correct releases over {seeds} seeds (first evaluations, level {1 - alpha:.4f})\n")
    print("| release | claim | calls | above the claim | p-value of that many at rate "
          f"{alpha:.4f} | median bound | largest | events chosen |")
    print("|---|---|---|---|---|---|---|---|")
    # closures of one library share a mechanism identity (their source), so each release gets
    # seeds of its own: a reserved split is evaluated once per process
    for m, (label, mech, eps, delta, calls) in enumerate(_correct()):
        bounds, events = [], set()
        for seed in range(seeds):
            result, _ = audit(mech, [([0.0], [1.0])], calls, 1000 + 100 * m + seed, delta=delta)
            bounds.append(result.epsilon_lower)
            events.add(result.chosen.split(" ")[0])
        above = sum(b > eps for b in bounds)
        p_value = float(binom.sf(above - 1, seeds, alpha))
        print(f"| {label} | ({eps:g}, {delta:g}) | {calls:.0e} | {above}/{seeds} | {p_value:.3f} | "
              f"{np.median(bounds):.4f} | {max(bounds):.4f} | {', '.join(sorted(events))} |",
              flush=True)


def cost(quick: bool) -> None:
    """The share of a correct-mechanism audit's CPU time spent in the representation families.

    The fits of ``grain`` and ``mantissa`` (their screen included) are timed inside the audit;
    when they find nothing, that is all they cost, since the event and the reserved scoring are
    then the value families'. (Comparing two whole audits instead measures mostly the machine:
    with other processes running, the CPU time of a multithreaded fit varies by more than the
    families cost.)
    """
    from certify.blackbox import events

    print("\n## Cost of the representation families on correct mechanisms (CPU seconds)\n")
    print("| mechanism | calls | audit | in the bit families | share | bit scores fitted | event |")
    print("|---|---|---|---|---|---|---|")
    cases: list[tuple[str, Callable[..., Any], int]] = [
        ("snapped Laplace, 1 coordinate", snapped_laplace, 10**6 if quick else 10**7),
        ("snapped Laplace, 10 coordinates", snapped_vector, 10**5 if quick else 10**6),
    ]
    for name, eps, delta, calls in (("opendp-laplace", 1.0, 0.0, 4 * 10**5),
                                    ("pydp-laplace", 1.0, 0.0, 10**6)):
        try:
            cases.append((f"{libraries.version(name)} {name.split('-')[1]}",
                          libraries.mechanism(name, eps, delta), calls // 10 if quick else calls))
        except ImportError:
            pass
    original = events.float_fitted
    spent, fitted = [0.0], [0]

    def timed(*args: Any) -> Any:
        start = time.process_time()
        out = original(*args)
        spent[0] += time.process_time() - start
        fitted[0] += len(out)
        return out

    events.float_fitted = timed  # type: ignore[assignment]
    try:
        for k, (label, mech, calls) in enumerate(cases):
            spent[0], fitted[0] = 0.0, 0
            result, seconds = audit(mech, [([0.0], [1.0])], calls, seed=300 + k)
            print(f"| {label} | {calls:.0e} | {seconds:.2f} | {spent[0]:.3f} | "
                  f"{spent[0] / seconds:.2%} | {fitted[0]} | {result.chosen} |", flush=True)
    finally:
        events.float_fitted = original  # type: ignore[assignment]


ONLY: list[str] = []
CALLS: list[int] = []


def library_table(quick: bool) -> None:
    """Each library release on Delta-Siege's grid: certify's bound, verdict, calls."""
    calls = CALLS[0] if CALLS else 10**5 if quick else 10**6
    print(f"\n## Library releases on Delta-Siege's grid, {calls:.0e} calls per cell, 95%\n")
    print("| release | version | (epsilon, delta) | epsilon_lower | verdict | event | CPU s |")
    print("|---|---|---|---|---|---|---|")
    for k, (name, (_, grid)) in enumerate(libraries.LIBRARIES.items()):
        if ONLY and not any(part in name for part in ONLY):
            continue
        for j, (eps, delta) in enumerate(grid):
            try:
                mech = libraries.mechanism(name, eps, delta)
            except ImportError as exc:
                print(f"| {name} | not importable ({exc}) | ({eps:g}, {delta:g}) | | | | |")
                break
            result, seconds = audit(mech, [([0.0], [1.0])], calls, seed=1000 + 10 * k + j,
                                    delta=delta)
            print(f"| {name} | {libraries.version(name)} | ({eps:g}, {delta:g}) | "
                  f"{result.epsilon_lower:.4f} | {verdict(result, eps, delta)} | {result.chosen} | "
                  f"{seconds:.1f} |", flush=True)


DS_CELLS = (
    ("laplace_inversion", "bug:InversionLaplace", 0.1, 0.0),
    ("gauss_ziggurat", "bug:ZigguratGaussian", 1.0, 1e-6),
    ("gauss_polar", "bug:PolarGaussian", 1.0, 1e-6),
    ("gauss_boxmuller", "bug:BoxMullerGaussian", 1.0, 1e-6),
    ("gauss_opacus", "opacus-gaussian", 1.0, 1e-6),
    ("gauss_pydp", "pydp-gaussian", 1.0, 1e-6),
    ("laplace_pydp", "pydp-laplace", 0.1, 0.0),
    ("laplace_ibm", "diffprivlib-laplace", 0.1, 0.0),
    ("gauss_ibm", "diffprivlib-gaussian", 1.0, 1e-6),
    ("laplace_opendp", "opendp-laplace", 0.1, 0.0),
    ("gauss_opendp", "opendp-gaussian", 1.0, 1e-6),
)
"""Delta-Siege's mechanism name, certify's counterpart, and the cell both were run at."""


def side_by_side(quick: bool) -> None:
    """Certify on Delta-Siege's cells at its budget: 8 n calls (n per input per stage, 4 stages)."""
    n = 10**4 if quick else 10**5
    calls = 8 * n
    print(f"\n## Side by side with Delta-Siege at n = {n:.0e} ({calls:.0e} calls)\n")
    print("| Delta-Siege mechanism | certify's | (epsilon, delta) | epsilon_lower | verdict | event |")
    print("|---|---|---|---|---|---|")
    for k, (ds_name, ours, eps, delta) in enumerate(DS_CELLS):
        try:
            mech = BUGS[ours[4:]] if ours.startswith("bug:") else libraries.mechanism(ours, eps, delta)
        except ImportError as exc:
            print(f"| {ds_name} | {ours}: not importable ({exc}) | ({eps:g}, {delta:g}) | | | |")
            continue
        result, _ = audit(mech, [([0.0], [1.0])], calls, seed=2000 + k, delta=delta)
        print(f"| {ds_name} | {ours} | ({eps:g}, {delta:g}) | {result.epsilon_lower:.4f} | "
              f"{verdict(result, eps, delta)} | {result.chosen} |", flush=True)


SECTIONS = {"textbook": textbook, "bugs": bugs, "curator": curator, "validity": validity,
            "cost": cost, "libraries": library_table, "sidebyside": side_by_side}


def main() -> None:
    """Run the chosen sections."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--section", action="append", choices=sorted(SECTIONS))
    parser.add_argument("--quick", action="store_true", help="smaller budgets and fewer seeds")
    parser.add_argument("--library", action="append", default=[],
                        help="libraries section: only releases whose name contains this")
    parser.add_argument("--calls", type=int, action="append", default=[],
                        help="libraries section: calls per cell (default 1e6)")
    args = parser.parse_args()
    ONLY.extend(args.library)
    CALLS.extend(args.calls)
    chosen = args.section or [s for s in SECTIONS if s not in ("libraries", "sidebyside")]
    for name in chosen:
        SECTIONS[name](args.quick)
    print(f"\n(certify {cf.__version__}, numpy {np.__version__})")


if __name__ == "__main__":
    main()
