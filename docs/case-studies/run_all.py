"""Run every case study and print the results table (the one in README.md).

Run ``python run_all.py [--quick] [--out DIR] [--seed S]``. Each study's reports go under
``DIR`` (default ``case-studies/``, or ``case-studies-quick/`` with ``--quick``, in the current
folder), with ``results.md`` there holding the table; the committed ``results/`` beside this
script are rewritten only by ``--out results``. Each study's own script runs it alone.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from types import ModuleType

import dpsgd_step
import opendp_gaussian_mean
import opendp_gaussian_zcdp
import opendp_histogram
import opendp_laplace_sum
import planted_data_bounds_mean
import planted_small_noise
import pydp_bounded_mean
import pydp_bounded_sum
import pydp_count
import pydp_gaussian_profile
from casestudy import Row, default_root, markdown_table
from curves import CurveRow, curve_table

STUDIES: tuple[ModuleType, ...] = (
    opendp_laplace_sum,
    opendp_gaussian_mean,
    opendp_histogram,
    pydp_bounded_sum,
    pydp_bounded_mean,
    pydp_count,
    planted_data_bounds_mean,
)
"""Every study script at claimed epsilons, in the table's order."""

CURVE_STUDIES: tuple[ModuleType, ...] = (
    opendp_gaussian_zcdp,
    pydp_gaussian_profile,
    dpsgd_step,
    planted_small_noise,
)
"""Every study under curve claims (GDP, zCDP, profiles), in the second table's order."""


def main(quick: bool = False, out: str | None = None, seed: int = 0) -> list[Row]:
    """Run every study (each in its own folder under ``out``); write both tables; return the first's rows."""
    root = Path(out) if out is not None else default_root(quick)
    rows: list[Row] = []
    for study in STUDIES:
        start = time.perf_counter()
        rows += study.main(quick=quick, out=str(root / study.STUDY.key), seed=seed)
        print(f"-- {study.STUDY.key}: {time.perf_counter() - start:.1f} s")
    curves: list[CurveRow] = []
    for study in CURVE_STUDIES:
        start = time.perf_counter()
        curves += study.main(quick=quick, out=str(root / study.STUDY.key), seed=seed)
        print(f"-- {study.STUDY.key}: {time.perf_counter() - start:.1f} s")
    table = markdown_table(rows) + "\n\n" + curve_table(curves)
    (root / "results.md").write_text(table + "\n")
    print(table)
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer calls (the form CI runs)")
    parser.add_argument(
        "--out", default=None,
        help="output folder (default: case-studies/ or case-studies-quick/ in the current folder)",
    )
    parser.add_argument("--seed", type=int, default=0, help="audit seed (default 0)")
    args = parser.parse_args()
    main(quick=args.quick, out=args.out, seed=args.seed)
