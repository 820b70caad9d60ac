"""Google's DP library (python-dp): ``BoundedMean`` of the wine "alcohol" column.

The release: ``BoundedMean(epsilon, lower_bound=10, upper_bound=15, dtype="float")
.quick_result(alcohol)``, epsilon-DP when one record (one user) is added or removed (the library
splits epsilon between a noisy sum and a noisy count). Neighbours: the 178 values, and the
values with one record added at the upper bound, at the lower bound or at the midpoint.

Run ``python pydp_bounded_mean.py [--quick] [--out DIR] [--seed S]``.
"""

from __future__ import annotations

import releases
from casestudy import Candidate, Row, Study, cli, run_study

DATA = ("wine", "alcohol")

STUDY = Study(
    key="pydp-bounded-mean",
    title="python-dp BoundedMean",
    library="python-dp",
    api='BoundedMean(epsilon=epsilon, lower_bound=10.0, upper_bound=15.0, dtype="float").quick_result(data)',
    mechanism=releases.pydp_bounded_mean,
    data='wine "alcohol" (178 records), bounds [10, 15]',
    neighbours="one record added or removed",
    candidates=tuple(
        Candidate(releases.original(), releases.add_one(*DATA, value), meaning)
        for value, meaning in (
            (15.0, "one record added at the upper bound 15"),
            (10.0, "one record added at the lower bound 10"),
            (12.5, "one record added at the midpoint 12.5"),
        )
    ),
    calls=600_000,
    quick_calls=30_000,
)


def main(quick: bool = False, out: str | None = None, seed: int = 0) -> list[Row]:
    """Audit the study at epsilon 0.1, 1 and 8; write the reports; return the results rows."""
    return run_study(STUDY, quick=quick, out=out, seed=seed)


if __name__ == "__main__":
    cli(main, __doc__)
