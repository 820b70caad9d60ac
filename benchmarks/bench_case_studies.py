"""Validity over seeds on the case studies (docs/case-studies): real DP libraries and a planted bug.

Every correct library release (OpenDP, python-dp) is audited at each claimed epsilon with many
seeds; no certified lower bound may exceed the claimed epsilon. The planted bug (a DP mean with
clipping bounds taken from the data) must be Refuted with every seed. The table gives, per study
and claimed epsilon, the bounds over seeds, the largest bound as a share of the claim (how close
a violation would have come: a budget where failure is possible), the count above the claim and
the count of Refuted verdicts.

Run ``.venv/bin/python benchmarks/bench_case_studies.py [--seeds 20] [--scale 0.5] [--only KEY ...]``
(needs the ``case-studies`` extra). ``--scale`` multiplies each study's full-form budget.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs" / "case-studies"))

import run_all
from casestudy import sweep, sweep_table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=20, help="seeds per study (default 20)")
    parser.add_argument("--first-seed", type=int, default=1, help="first seed (default 1)")
    parser.add_argument(
        "--scale", type=float, default=0.5, help="share of the full-form budget (default 0.5)"
    )
    parser.add_argument("--workers", type=int, default=None, help="processes for reserved calls (default 2)")
    parser.add_argument("--only", nargs="*", default=None, help="study keys (default all)")
    args = parser.parse_args()
    studies = [m.STUDY for m in run_all.STUDIES if args.only is None or m.STUDY.key in args.only]
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        rows = sweep(
            studies, seeds, scale=args.scale, out=folder, workers=args.workers,
            say=lambda line: print(line, file=sys.stderr, flush=True),
        )
    print(sweep_table(rows))
    print(f"\n{len(rows)} audits, seeds {seeds[0]}..{seeds[-1]}, scale {args.scale:g}, "
          f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
