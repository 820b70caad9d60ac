"""Google's DP library (python-dp): ``BoundedSum`` of the breast-cancer "mean radius" column.

The release: ``BoundedSum(epsilon, lower_bound=5, upper_bound=30, dtype="float")
.quick_result(radii)``, epsilon-DP when one record (one user) is added or removed. The same
query as the OpenDP Laplace sum study. Neighbours: the 569 radii, and the radii with one record
added at the upper bound, at the lower bound or at the midpoint.

Run ``python pydp_bounded_sum.py [--quick] [--out DIR] [--seed S]``.
"""

from __future__ import annotations

import releases
from casestudy import Candidate, Row, Study, cli, run_study

DATA = ("breast_cancer", "mean radius")

STUDY = Study(
    key="pydp-bounded-sum",
    title="python-dp BoundedSum",
    library="python-dp",
    api='BoundedSum(epsilon=epsilon, lower_bound=5.0, upper_bound=30.0, dtype="float").quick_result(data)',
    mechanism=releases.pydp_bounded_sum,
    data='breast_cancer "mean radius" (569 records), bounds [5, 30]',
    neighbours="one record added or removed",
    candidates=tuple(
        Candidate(releases.original(), releases.add_one(*DATA, value), meaning)
        for value, meaning in (
            (30.0, "one record added at the upper bound 30"),
            (5.0, "one record added at the lower bound 5"),
            (17.5, "one record added at the midpoint 17.5"),
        )
    ),
    calls=1_000_000,
    quick_calls=40_000,
)


def main(quick: bool = False, out: str | None = None, seed: int = 0) -> list[Row]:
    """Audit the study at epsilon 0.1, 1 and 8; write the reports; return the results rows."""
    return run_study(STUDY, quick=quick, out=out, seed=seed)


if __name__ == "__main__":
    cli(main, __doc__)
