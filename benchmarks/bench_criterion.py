"""Threshold criterion speed: the bounded searches against the searches they replaced.

Run with ``.venv/bin/python benchmarks/bench_criterion.py [--quick] [--baseline COMMIT]
[--audits PrefixSum,SparseVectorTechnique3] [--calls 1000000]``.

The baseline is ``certify/protocol/criterion.py`` as it was at ``--baseline`` (default: the
commit before the bounded searches), read with ``git show`` and run in this process beside
the current module, on the same inputs. Workloads, each over development scores of 1e3 to 1e6
per class and half, planned reserved sizes 1e5 to 1e7 and ``alpha_per_rate`` 0.0152 and
0.00125 (one and eight-odd tests at 95%):

- ``robust_cut`` as an audit calls it: the inputs of every call of an audit of suite
  mechanisms (``--audits``, values tests, ``--calls`` calls), recorded and replayed;
- ``robust_cut`` on PrefixSum-like scores (sums of ten binned log ratios of Laplace
  coordinates: many tied values), SVT-like scores (a count of above-threshold answers: a
  handful of values), a Gaussian shift and a rare tail window, by size (above 1e5 scores per
  class, sorting them is much of the cost of both);
- ``best_cut`` at a pessimistic level (the histogram family's choice);
- ``max_bound_cut``, ``best_cut`` by expected bound (its quadrature);
- ``pessimistic_bound`` called on one event at a time (``_event_value``) and on 4096 cuts;
- ``expected_bound`` on 4096 cuts (its quadrature, computed exactly as before).

Prints process CPU seconds of both (each case run ``--repeat`` times, alternating, and its
least time counted: on a shared machine one run can be inflated several times), their ratio,
how many choices (orientation, threshold) differ and the largest relative difference of the
chosen criterion values.
"""

from __future__ import annotations

import argparse
import functools
import os
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from certify.protocol import criterion

BASELINE = "6daede7"
"""The last commit whose criterion searched without bounds."""

Halves = list[tuple[NDArray[np.float64], NDArray[np.float64]]]


def baseline_module(commit: str) -> types.ModuleType:
    """``certify/protocol/criterion.py`` at ``commit``, as a module beside the current one."""
    root = Path(__file__).resolve().parent.parent
    source = subprocess.run(
        ["git", "-C", str(root), "show", f"{commit}:certify/protocol/criterion.py"],
        check=True, capture_output=True, text=True,
    ).stdout
    module = types.ModuleType("criterion_baseline")
    module.__file__ = f"{commit}:certify/protocol/criterion.py"
    sys.modules[module.__name__] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


def scores(kind: str, n: int, rng: np.random.Generator) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Development scores of one class pair: ``n`` per class."""
    if kind == "prefixsum":  # sum of 10 binned log ratios of Laplace coordinates (ties)
        edges = np.linspace(-3.0, 3.0, 15)
        ratio = np.round(np.linspace(-0.9, 0.9, 16), 6)
        out = []
        for shift in (0.0, 0.08):
            d = rng.laplace(shift, 1.0, (n, 10))
            out.append(ratio[np.searchsorted(edges, d)].sum(axis=1))
        return out[0], out[1]
    if kind == "svt":  # how many of 20 queries answer above the threshold (a handful of values)
        return rng.binomial(20, 0.30, n) * 1.0, rng.binomial(20, 0.33, n) * 1.0
    if kind == "shift":
        return rng.normal(0.0, 1.0, n), rng.normal(0.1, 1.0, n)
    k = max(n // 500, 1)  # "tail": a rare window far out carries the effect
    return rng.normal(0.0, 1.0, n), np.concatenate([rng.normal(0.0, 1.0, n - k), rng.normal(4.0, 0.1, k)])


def recorded_calls(name: str, calls: int, seed: int) -> list[tuple[Halves, tuple[Any, ...], dict[str, Any]]]:
    """The inputs of every robust_cut call of an audit of the suite mechanism ``name``."""
    import certify as cf
    from certify.blackbox import SUITE, events

    found: list[tuple[Halves, tuple[Any, ...], dict[str, Any]]] = []
    original = events.robust_cut

    def record(halves: Halves, *args: Any, **kwargs: Any) -> Any:
        found.append(([(np.array(a), np.array(b)) for a, b in halves], args, kwargs))
        return original(halves, *args, **kwargs)

    mechanism = SUITE[name]
    pairs = [(list(x), list(y)) for x, y in mechanism.input_pairs]
    pairs += [(y, x) for x, y in pairs]
    events.robust_cut = record  # type: ignore[assignment]
    try:
        with tempfile.TemporaryDirectory() as folder:
            cf.audit_mechanism(mechanism, inputs=pairs, calls=calls, seed=seed, progress=False,
                               ledger=cf.Ledger(os.path.join(folder, "m.ledger")), tests="values")
    finally:
        events.robust_cut = original
    return found


def halves(kind: str, n: int, rng: np.random.Generator) -> Halves:
    """Two independent halves of ``n`` scores per class."""
    return [scores(kind, n, rng) for _ in range(2)]


def call(function: str, *args: Any, **kwargs: Any) -> Callable[[types.ModuleType], Any]:
    """A call of ``function`` with these arguments, to run on either module."""
    return lambda module: getattr(module, function)(*args, **kwargs)


def one_at_a_time(module: types.ModuleType, e: NDArray[np.float64], m: int, r: int) -> NDArray[np.float64]:
    """pessimistic_bound of 200 events, one call each (as the audit values a chosen event)."""
    return np.array([module.pessimistic_bound(e[0, i:i + 1], m, e[1, i:i + 1], m, r, r, 0.0152)[0]
                     for i in range(200)])


def cpu(fn: Callable[[], Any]) -> tuple[Any, float]:
    """Run fn once; its value and process CPU seconds."""
    c0 = time.process_time()
    value = fn()
    return value, time.process_time() - c0


class Tally:
    """CPU seconds of both implementations and the agreement of their choices, per workload."""

    def __init__(self, old: types.ModuleType, new: types.ModuleType, repeat: int) -> None:
        self.old, self.new, self.repeat = old, new, repeat
        self.rows: dict[str, list[float]] = {}

    def add(self, name: str, run: Callable[[types.ModuleType], Any], chosen: slice = slice(0, 0)) -> None:
        """Time both (least of the repeats); compare the choice ``value[chosen]`` and the values after it."""
        t_old = t_new = np.inf
        for _ in range(self.repeat):  # alternating, so that both meet the same load
            got_old, t = cpu(lambda: run(self.old))
            t_old = min(t_old, t)
            got_new, t = cpu(lambda: run(self.new))
            t_new = min(t_new, t)
        row = self.rows.setdefault(name, [0.0, 0.0, 0.0, 0.0, 0.0])
        row[0] += t_old
        row[1] += t_new
        row[2] += 1
        if isinstance(got_old, np.ndarray):
            values_old, values_new = got_old, got_new
            row[3] += float(not np.array_equal(values_old, values_new))
        else:
            row[3] += float(got_old[chosen] != got_new[chosen])
            values_old = np.array(got_old[chosen.stop:], dtype=np.float64)
            values_new = np.array(got_new[chosen.stop:], dtype=np.float64)
        scale = np.maximum(np.abs(values_old), 1e-300)
        row[4] = max(row[4], float(np.max(np.abs(values_new - values_old) / scale, initial=0.0)))

    def print(self) -> None:
        """The table: one row per workload and a total."""
        print(f"{'workload':40} {'cases':>5} {'old CPU s':>10} {'new CPU s':>10} {'ratio':>6} "
              f"{'differ':>6} {'max rel diff':>12}")
        total = [0.0, 0.0]
        for name, (t_old, t_new, cases, differ, rel) in self.rows.items():
            total[0] += t_old
            total[1] += t_new
            print(f"{name:40} {int(cases):>5} {t_old:>10.2f} {t_new:>10.2f} {t_old / t_new:>6.1f} "
                  f"{int(differ):>6} {rel:>12.1e}")
        print(f"{'total':40} {'':>5} {total[0]:>10.2f} {total[1]:>10.2f} {total[0] / total[1]:>6.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer sizes (about a minute)")
    parser.add_argument("--baseline", default=BASELINE, help="commit of the baseline criterion")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--audits", default="PrefixSum,SparseVectorTechnique3",
                        help="suite mechanisms whose audits' robust_cut calls are replayed ('' for none)")
    parser.add_argument("--calls", type=int, default=1_000_000, help="calls of each recorded audit")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each case; the least CPU counts")
    args = parser.parse_args()
    tally = Tally(baseline_module(args.baseline), criterion, args.repeat)
    for name in filter(None, [] if args.quick else args.audits.split(",")):
        for h, more, named in recorded_calls(name, args.calls, args.seed):
            tally.add(f"robust_cut, {name} audit", call("robust_cut", h, *more, **named), slice(0, 2))
    rng = np.random.default_rng(args.seed)
    sizes = (1_000, 10_000) if args.quick else (1_000, 10_000, 100_000, 1_000_000)
    reserved = (10**5, 10**7) if args.quick else (10**5, 10**6, 10**7)
    alphas = (0.0152, 0.00125)
    data = {(kind, n): halves(kind, n, rng) for kind in ("prefixsum", "svt", "shift", "tail") for n in sizes}
    for (kind, n), h in data.items():
        for r in reserved:
            for alpha in alphas:
                # a score per coordinate: candidates=10, as choose_event searches coordinates
                tally.add(f"robust_cut {kind}, {n:,}/class",
                          call("robust_cut", h, r, r, alpha, candidates=10), slice(0, 2))
    for (_, n), h in data.items():
        for r in reserved:
            for alpha in alphas:
                tally.add(f"best_cut, level 0.05, {n:,}/class",
                          call("best_cut", *h[0], r, r, alpha, dev_level=0.05), slice(0, 2))
    for kind in ("prefixsum", "shift", "tail"):
        for n in sizes[:3]:
            s0, s1 = scores(kind, n, rng)
            for r in reserved:
                tally.add("max_bound_cut (quadrature)", call("max_bound_cut", s0, s1, r, r, 0.0152),
                          slice(0, 1))
                tally.add("best_cut, expected (quadrature)", call("best_cut", s0, s1, r, r, 0.00125),
                          slice(0, 2))
    for m in (2_000, 200_000):
        e = rng.integers(0, m + 1, (2, 4096)) * 1.0
        for r in reserved:
            tally.add("pessimistic_bound, 1 event x 200", functools.partial(one_at_a_time, e=e, m=m, r=r))
            tally.add("pessimistic_bound, 4096 cuts",
                      call("pessimistic_bound", e[0], m, e[1], m, r, r, 0.0152))
            tally.add("expected_bound, 4096 cuts", call("expected_bound", e[0], m, e[1], m, r, r, 0.0152))
    print(f"baseline: certify/protocol/criterion.py at {args.baseline}; CPU seconds, least of "
          f"{args.repeat} runs of each case, summed over cases")
    tally.print()


if __name__ == "__main__":
    main()
