"""How much the race's showings can know: every pair valued at growing calls, none put out.

``audit_mechanism`` races its candidate pairs: a pair goes out on a showing at a few tens of
thousands of calls per input (its event chosen on one half of its calls, counted on the other,
and the counts of both halves pooled). This bench measures those showings without the race's
rules: for one suite mechanism and its candidate pairs (its published pairs in both orders, as
``bench_sidebyside.py`` gives them; a pair and its reverse are one candidate), it draws every
distinct input's development calls at growing sizes (each size adds fresh calls to the ones
before), values every pair at every size as a screening round would, and prints how often the
pairs named by ``--best`` are among the top k by each statistic of the showing:

- ``key``: the race's ranking key, the held-out log ratio with both rates two standard
  deviations high (``Candidate.key``);
- ``low``: the same at one standard deviation (``Candidate.plug_in``, the race's floor);
- ``held``: the expected bound at the planned reserve of the held-out counts
  (``Candidate.held_out``);
- ``high``: the log ratio with both rates one standard deviation low (``Candidate.upper``).

Without ``--best`` the best pairs are those whose mean held-out value at the largest size, over
the seeds, is highest (``--n-best`` of them). Run from the repository root::

    python benchmarks/bench_race_showings.py --mechanism SparseVectorTechnique3 --calls 1e7 \\
        --sizes 16663 40000 80000 160000 --seeds $(seq 200 229) --best 0 1

Each input's calls at each size come from ``SeedSequence(seed, spawn_key=(1, input, size
index))``, as an audit draws its rounds; an audit with the same seed draws rounds of other
sizes, so its showings are not these. The bench reads the race's private functions
(``certify.blackbox._development``): it measures the race, not the public API.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from certify.blackbox import SUITE
from certify.blackbox._development import (
    NOT_RACED,
    Candidate,
    Rows,
    _cross_fitted_showing,
    draw_calls,
    plan_budget,
    unordered,
)
from certify.blackbox.events import Choice, Family, choose_event, resolve_families
from certify.plan import rate_level
from certify.protocol.ledger import evaluation_share

STATISTICS: dict[str, Callable[[Candidate], tuple[float, float]]] = {
    "key": lambda c: c.key,
    "low": lambda c: (c.plug_in, c.held_out),
    "held": lambda c: (c.held_out, c.plug_in),
    "high": lambda c: (c.upper, c.held_out),
}


def _pairs(name: str) -> tuple[list[tuple[int, int]], list[str]]:
    """The mechanism's candidate pairs as distinct-input indices, one per unordered pair."""
    labelled = [
        ((repr(list(a)), np.asarray(a)), (repr(list(b)), np.asarray(b)))
        for a, b in SUITE[name].input_pairs
    ]
    labels = list(dict.fromkeys(label for pair in labelled for label, _ in pair))
    pairs = [
        (labels.index(labelled[p][0][0]), labels.index(labelled[p][1][0]))
        for p in unordered(labelled)
    ]
    return pairs, labels


def _showings(
    name: str, calls: int, sizes: Sequence[int], seed: int, tests: str
) -> dict[tuple[int, int], Candidate]:
    """Every pair's showing at every size, keyed by (size index, pair index)."""
    m = SUITE[name]
    pairs, labels = _pairs(name)
    inputs = {labels.index(repr(list(x))): np.asarray(x) for a, b in m.input_pairs for x in (a, b)}
    width = int(m.output_dim)
    budget = plan_budget(calls, len(pairs), len(inputs), 0.1, width)
    alpha = rate_level(0.05 * evaluation_share(1))
    families = tuple(f for f in resolve_families(tests) if f not in NOT_RACED)

    def develop(
        dev_a: NDArray[np.float64], dev_b: NDArray[np.float64], fams: Sequence[Family],
        reserved: int, alpha_per_rate: float, level: float,
    ) -> list[Choice]:
        return choose_event(
            dev_a, dev_b, fams, reserved_a=reserved, reserved_b=reserved,
            alpha_per_rate=alpha_per_rate, delta=0.0, seed=seed, dev_level=level, per_family=True,
        )

    rows = {i: Rows(width, max(sizes)) for i in inputs}
    shown: dict[tuple[int, int], Candidate] = {}
    have = 0
    for r, size in enumerate(sizes):
        for i, x in inputs.items():
            seq = np.random.SeedSequence(seed, spawn_key=(1, i, r))
            draw_calls(m, x, size - have, seq, name, labels[i], rows[i])
        have = size
        for p, (a, b) in enumerate(pairs):
            shown[(r, p)] = _cross_fitted_showing(
                p, r, rows[a].rows, rows[b].rows, budget.reserved, develop, families,
                alpha_per_rate=alpha, delta=0.0, target=None,
            )
    return shown


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mechanism", default="SparseVectorTechnique3", choices=sorted(SUITE))
    parser.add_argument("--calls", type=float, default=1e7, help="the audit's budget (sets the reserve)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[16_663, 40_000, 80_000, 160_000],
                        help="development calls per input, growing")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(200, 212)))
    parser.add_argument("--best", type=int, nargs="*", default=None,
                        help="indices of the pairs that certify most (printed first)")
    parser.add_argument("--n-best", type=int, default=2)
    parser.add_argument("--tests", default="values", help="families, as audit_mechanism's tests")
    args = parser.parse_args()
    sizes = sorted(set(args.sizes))
    if sizes[0] < 8:
        parser.error("--sizes must be at least 8 calls per input")
    pairs, labels = _pairs(args.mechanism)
    if args.best and not set(args.best) <= set(range(len(pairs))):
        parser.error(f"--best takes pair indices from 0 to {len(pairs) - 1}")
    if not 1 <= args.n_best < len(pairs):
        parser.error(f"--n-best must be from 1 to {len(pairs) - 1}")
    for p, (a, b) in enumerate(pairs):
        print(f"pair {p}: {labels[a]} ~ {labels[b]}")
    every: dict[int, dict[tuple[int, int], Candidate]] = {}
    start = time.perf_counter()
    for k, seed in enumerate(args.seeds, 1):
        every[seed] = _showings(args.mechanism, int(args.calls), sizes, seed, args.tests)
        print(f"seed {seed} done ({k}/{len(args.seeds)}, {time.perf_counter() - start:.0f} s)",
              file=sys.stderr, flush=True)
    last = len(sizes) - 1
    if args.best:
        best = set(args.best)
    else:
        mean = {p: math.fsum(every[s][(last, p)].held_out for s in every) / len(every)
                for p in range(len(pairs))}
        best = set(sorted(mean, key=lambda p: mean[p], reverse=True)[: args.n_best])
    print(f"best pairs: {sorted(best)}; {len(every)} seeds; among the top k by each statistic "
          "of the development showings (diagnostics of the race, not certified bounds):")
    tops = [k for k in (1, 2, 3, 4) if k < len(pairs)]
    print("calls per input | statistic | " + " | ".join(f"top {k}" for k in tops))
    for r, size in enumerate(sizes):
        for stat, value in STATISTICS.items():
            hits = dict.fromkeys(tops, 0)
            for shown in every.values():
                ranked = sorted(range(len(pairs)), key=lambda p: value(shown[(r, p)]), reverse=True)
                first = min(ranked.index(p) for p in best)
                for k in tops:
                    hits[k] += first < k
            print(f"{size} | {stat} | " + " | ".join(f"{hits[k]}/{len(every)}" for k in tops))


if __name__ == "__main__":
    main()
