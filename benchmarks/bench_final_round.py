"""What the final round compares: each finalist's event, valued on calls no choice saw.

After the race, ``audit_mechanism`` develops each finalist's events on its final-round calls and
keeps the pair whose leading event has the best development value (``final_round``). This
bench runs audits of one suite mechanism (its published pairs in both orders, as
``bench_sidebyside.py`` gives them; its own ledger per audit) and, for every finalist of each,
values the event it was compared with on ``--truth-calls`` fresh calls per input: the bound
that event would be expected to certify on the planned reserve (its rates at their plug-in
values on those calls, bounded as the evaluation bounds them, the better direction). It then
prints, per comparator of the finalists (``development``: the development value, as the audit
compares them; ``plug-in``: the same cut's bound at plug-in rates on the development calls,
the smaller over its two quarters), the mean of the picked finalist's fresh value, how often
it is the finalist with the best fresh value, and how often its fresh value is below 0.8 of
the best finalist's.

The fresh values are diagnostics of the choice, not certified bounds; each is an estimate from
``--truth-calls`` calls per input (a log ratio of rates near 2% from 1e6 calls varies by about
0.01). Run from the repository root::

    python benchmarks/bench_final_round.py --mechanism SparseVectorTechnique3 --seeds $(seq 0 11)
    python benchmarks/bench_final_round.py --mechanism SVT34Parallel --seeds 3

The bench reads the audit's private development record (``certify.blackbox.audit.develop`` is
wrapped to keep it): it measures the final round, not the public API.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import certify as cf
import certify.blackbox.audit as audit_module
from certify.blackbox import SUITE
from certify.blackbox._development import Development
from certify.blackbox.events import Choice
from certify.plan import rate_level
from certify.protocol.criterion import pessimistic_bound

CHUNK = 200_000

COMPARATORS: dict[str, Callable[[Choice], float]] = {
    "development": lambda c: c.value,
    "plug-in": lambda c: c.plug_in,
}


def expected_bound(k_a: int, k_b: int, calls: int, n: int, alpha: float) -> float:
    """The bound an event counted ``k_a`` and ``k_b`` times in ``calls`` per input would certify.

    On ``n`` calls per input, its rates at their plug-in values, each bounded at ``alpha`` as the
    evaluation bounds it (``pessimistic_bound`` at level 1/2, as the audit values held-out
    counts), in the better of the two directions (the set rare under a, or its complement rare
    under b).
    """
    inside = np.array([float(k_a)]), np.array([float(calls - k_b)])
    outside = np.array([float(calls - k_b)]), np.array([float(k_a)])
    return max(
        float(pessimistic_bound(rare, calls, misses, calls, n, n, alpha, 0.0, 0.5)[0])
        for rare, misses in (inside, outside)
    )


def fresh_value(
    name: str, inputs: tuple[Any, Any], choice: Choice, calls: int, n: int, alpha: float, seed: list[int]
) -> float:
    """``choice``'s expected bound (:func:`expected_bound`) from ``calls`` fresh calls per input."""
    m = SUITE[name]
    counts = []
    for side, x in enumerate(inputs):
        rng = np.random.default_rng([*seed, side])
        inside, done = 0, 0
        while done < calls:
            size = min(CHUNK, calls - done)
            out = np.asarray(m(np.asarray(x), size, rng), dtype=np.float64).reshape(size, -1)
            score = choice.orientation * choice.model.score(out)
            inside += int(np.count_nonzero(score >= choice.orientation * choice.threshold))
            done += size
        counts.append(inside)
    return expected_bound(counts[0], counts[1], calls, n, alpha)


def audit_finalists(name: str, calls: int, seed: int, truth_calls: int) -> dict[str, Any]:
    """One audit: its bound, and every finalist's event with its development and fresh values."""
    m = SUITE[name]
    pairs = [(list(a), list(b)) for a, b in m.input_pairs]
    pairs += [(b, a) for a, b in pairs]
    kept: list[tuple[Development, Any]] = []
    develop = audit_module.develop

    def keep(*args: Any, **kwargs: Any) -> Development:
        dev = develop(*args, **kwargs)
        kept.append((dev, args[1]))
        return dev

    audit_module.develop = keep  # type: ignore[assignment]
    try:
        ledger = cf.Ledger(os.path.join(tempfile.mkdtemp(), "m.ledger"))
        audit = cf.audit_mechanism(m, inputs=pairs, calls=calls, seed=seed, ledger=ledger,
                                   progress=False, tests="values")
    finally:
        audit_module.develop = develop  # type: ignore[assignment]
    dev, labelled = kept[0]
    n = min(audit.reserved_calls.values())
    alpha = rate_level(1.0 - audit.level_used)  # each rate's level, as the evaluation bounds it
    finalists = []
    for k, (p, choice, round_calls) in enumerate(dev.finalists):
        (label_a, x_a), (label_b, x_b) = labelled[p]
        fresh = fresh_value(name, (x_a, x_b), choice, truth_calls, n, alpha, [seed, 9, k])
        finalists.append({"pair": f"{label_a} ~ {label_b}", "family": choice.label,
                          "calls": round_calls, "choice": choice, "fresh": fresh})
    return {"bound": audit.certificate.epsilon_lower, "chosen": audit.chosen,
            "finalists": finalists}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mechanism", default="SparseVectorTechnique3", choices=sorted(SUITE))
    parser.add_argument("--calls", type=float, default=1e7)
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(4)))
    parser.add_argument("--truth-calls", type=float, default=1e6,
                        help="fresh calls per input that value each finalist's event")
    args = parser.parse_args()
    if args.truth_calls < 1000:
        parser.error("--truth-calls must be at least 1000")
    picked: dict[str, list[tuple[float, float]]] = {c: [] for c in COMPARATORS}
    start = time.perf_counter()
    for seed in args.seeds:
        got = audit_finalists(args.mechanism, int(args.calls), seed, int(args.truth_calls))
        print(f"seed {seed}: Certificate epsilon_lower {got['bound']:.4f} with {got['chosen']} "
              f"({time.perf_counter() - start:.0f} s)", flush=True)
        finalists = got["finalists"]
        for f in finalists:
            c = f["choice"]
            print(f"  {f['pair']}: {f['family']} on {f['calls']} calls per input, development "
                  f"{c.value:.4f}, plug-in {c.plug_in:.4f}, fresh {f['fresh']:.4f} (diagnostics)")
        if len(finalists) < 2:
            continue
        best = max(f["fresh"] for f in finalists)
        for comparator, value in COMPARATORS.items():
            top = max(finalists, key=lambda f: value(f["choice"]))  # the first of the largest
            picked[comparator].append((top["fresh"], best))
    audits = len(next(iter(picked.values())))
    print(f"\n{audits} audits with a final round of two finalists or more; the picked finalist's "
          "fresh value (diagnostics of the choice, not certified bounds):")
    print("comparator | mean fresh value | the best finalist | below 0.8 of the best")
    for comparator, got in picked.items():
        if not got:
            continue
        mean = math.fsum(v for v, _ in got) / len(got)
        best_count = sum(v == b for v, b in got)
        below = sum(v < 0.8 * b for v, b in got)
        print(f"{comparator} | {mean:.4f} | {best_count}/{len(got)} | {below}/{len(got)}")


if __name__ == "__main__":
    main()
