"""certify beside DP-Sniper at equal budgets: certified bound, CPU and peak memory per audit.

Each audit runs in a fresh process (so its CPU seconds and peak resident memory are its own) on a
suite mechanism with DP-Sniper's candidate pairs: the mechanism's published pairs in both
orders, as DP-Sniper's pattern generator lists them. With ``--dpsniper FILE`` (the JSON list of
DP-Sniper's own runs from the side-by-side harness, one object per run with ``mech``, ``budget``,
``seed``, ``lower_bound``, ``cpu_s`` and ``peak_rss_mb``) each cell is printed beside DP-Sniper's
mean at the same budget, with the ratio of CPU seconds and a flag where certify's mean falls
below DP-Sniper's or, at 1e7 calls and more, a seed falls below 0.8 times certify's mean.

Run from the repository root::

    python benchmarks/bench_sidebyside.py --dpsniper dpsniper_baseline.json
    python benchmarks/bench_sidebyside.py --budgets 1e6 --mechanisms all --seeds 0 1 2 3
    python benchmarks/bench_sidebyside.py --tests certify     # with the families on the bits

The default ``--tests values`` leaves out the families that read the floating-point
representation: DP-Sniper cannot see it, and its own Laplace code leaks through it (the default
families certify far above the real-arithmetic epsilon there; docs/bugs.md).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from typing import Any

SIX = ("LaplaceMechanism", "ReportNoisyMax3", "SparseVectorTechnique3", "NoisyHist2", "PrefixSum",
       "OneTimeRappor")

_CHILD = """
import json, os, resource, sys, tempfile
import certify as cf
from certify.blackbox import SUITE
name, budget, seed, tests = sys.argv[1], int(float(sys.argv[2])), int(sys.argv[3]), sys.argv[4]
m = SUITE[name]
pairs = [(list(a), list(b)) for a, b in m.input_pairs]
pairs += [(b, a) for a, b in pairs]
ledger = cf.Ledger(os.path.join(tempfile.mkdtemp(), "m.ledger"))
audit = cf.audit_mechanism(m, inputs=pairs, calls=budget, seed=seed, ledger=ledger, progress=False,
                           tests=tests)
use = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"bound": audit.certificate.epsilon_lower, "chosen": audit.chosen,
                  "pair": [audit.certificate.pair.a, audit.certificate.pair.b],
                  "development_calls": audit.development_calls, "seconds": audit.seconds,
                  "cpu_s": use.ru_utime + use.ru_stime, "peak_rss_mb": use.ru_maxrss / 1024}))
"""


def _run(name: str, budget: float, seed: int, tests: str) -> dict[str, Any]:
    """One audit in a child process: its JSON line, with the whole process's CPU seconds and peak MB.

    The child runs with ``-P``: it imports certify as this Python does (``PYTHONPATH`` first, then
    the installed package), not from the working directory, so ``PYTHONPATH=other/checkout``
    audits that checkout's code wherever the bench is started.
    """
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run(
            [sys.executable, "-P", "-c", _CHILD, name, str(budget), str(seed), tests], capture_output=True,
            text=True, env={**env, "CERTIFY_LEDGER": os.path.join(folder, "user.ledger")},
            check=False,
        )
    if done.returncode != 0:
        raise SystemExit(f"{name} at {budget:g} calls, seed {seed} failed:\n{done.stderr[-2000:]}")
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def _mean(values: list[float]) -> float:
    return math.fsum(values) / len(values) if values else math.nan


def main() -> None:
    """Run the audits and print the side-by-side table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budgets", nargs="*", type=float, default=[1e6, 1e7])
    parser.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2, 3])
    parser.add_argument("--mechanisms", nargs="*", default=list(SIX),
                        help="suite names, or 'all' for the whole suite")
    parser.add_argument("--tests", default="values", help="audit_mechanism tests= (default values)")
    parser.add_argument("--dpsniper", help="JSON list of DP-Sniper's runs from the harness")
    parser.add_argument("--json", help="also write every certify run here (JSON lines)")
    args = parser.parse_args()
    from certify.blackbox import SUITE

    names = list(SUITE) if args.mechanisms == ["all"] else args.mechanisms
    peer: dict[tuple[str, float], list[dict[str, Any]]] = defaultdict(list)
    if args.dpsniper:
        with open(args.dpsniper, encoding="utf-8") as handle:
            for run in json.load(handle):
                peer[(run["mech"], float(run["budget"]))].append(run)
    print("| mechanism | calls | DP-Sniper mean (seeds) | certify mean (seeds) | certify min / mean "
          "| CPU certify / DP-Sniper | peak MB certify / DP-Sniper | flags |")
    print("|---|---|---|---|---|---|---|---|")
    sink = open(args.json, "a", encoding="utf-8") if args.json else None  # noqa: SIM115
    for budget in args.budgets:
        for name in names:
            runs = []
            for seed in args.seeds:
                run = _run(name, budget, seed, args.tests)
                run.update(mech=name, budget=budget, seed=seed, tests=args.tests)
                runs.append(run)
                if sink is not None:
                    sink.write(json.dumps(run) + "\n")
                    sink.flush()
                print(f"  {name} {budget:g} seed {seed}: {run['bound']:.4f} {run['chosen']} "
                      f"{run['cpu_s']:.1f} CPU s", file=sys.stderr)
            bounds = [r["bound"] for r in runs]
            mean = _mean(bounds)
            theirs = peer.get((name, budget), [])
            their_mean = _mean([r["lower_bound"] for r in theirs])
            flags = []
            if theirs and mean < their_mean:
                flags.append("below DP-Sniper")
            if budget >= 1e7 and min(bounds) < 0.8 * mean:
                flags.append("a seed below 0.8 x mean")
            cpu = _mean([r["cpu_s"] for r in runs])
            rss = max(r["peak_rss_mb"] for r in runs)
            ours = ", ".join(f"{b:.3f}" for b in bounds)
            if theirs:  # no DP-Sniper runs at this budget: its cells say so, not nan
                their_cpu = _mean([r["cpu_s"] for r in theirs])
                their_bounds = ", ".join(f"{r['lower_bound']:.3f}" for r in theirs)
                their = f"{their_mean:.4f} ({their_bounds})"
                cpu_cell = f"{cpu:.1f} / {their_cpu:.1f} = {cpu / their_cpu:.2f}"
                rss_cell = f"{rss:.0f} / {max(r['peak_rss_mb'] for r in theirs):.0f}"
            else:
                their, cpu_cell, rss_cell = "-", f"{cpu:.1f} / -", f"{rss:.0f} / -"
            share = f"{min(bounds) / mean:.2f}" if mean > 0 else "-"
            print(f"| {name} | {budget:.0e} | {their} | {mean:.4f} ({ours}) | {share} "
                  f"| {cpu_cell} | {rss_cell} | {'; '.join(flags)} |", flush=True)
    if sink is not None:
        sink.close()


if __name__ == "__main__":
    main()
