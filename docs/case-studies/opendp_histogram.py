"""OpenDP's DP histogram of the digit classes in scikit-learn's digits data set.

The release: ``count_by_categories(categories=0..9) >> laplace`` on the 1,797 digit labels (an
unsized integer vector), the scale set by ``dp.binary_search_chain`` so that the measurement is
epsilon-DP for one record added or removed (symmetric distance 1; the counts move by 1 in L1).
OpenDP samples discrete Laplace noise for integer counts. Output: the ten noisy counts.
Neighbours: the labels, and the labels with one record of class 0, 5 or 8 added.

Run ``python opendp_histogram.py [--quick] [--out DIR] [--seed S]``.
"""

from __future__ import annotations

import releases
from casestudy import Candidate, Row, Study, cli, run_study

DATA = ("digits", "target")

STUDY = Study(
    key="opendp-histogram",
    title="OpenDP histogram (Laplace)",
    library="opendp",
    api=(
        "(space >> dp.t.then_count_by_categories(categories=range(10), null_category=False) >> "
        "dp.m.then_laplace(scale))(labels)"
    ),
    mechanism=releases.opendp_histogram,
    data="digits labels (1,797 records, 10 classes)",
    neighbours="one record added or removed (symmetric distance 1)",
    candidates=tuple(
        Candidate(releases.original(), releases.add_one(*DATA, label), f"one record of class {label} added")
        for label in (0, 5, 8)
    ),
    calls=100_000,
    quick_calls=8_000,
)


def main(quick: bool = False, out: str | None = None, seed: int = 0) -> list[Row]:
    """Audit the study at epsilon 0.1, 1 and 8; write the reports; return the results rows."""
    return run_study(STUDY, quick=quick, out=out, seed=seed)


if __name__ == "__main__":
    cli(main, __doc__)
