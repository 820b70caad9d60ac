"""Google's DP library (python-dp): ``Count`` of the records of scikit-learn's digits data set.

The release: ``Count(epsilon, dtype="float").quick_result(records)``, epsilon-DP when one record
(one user) is added or removed. Neighbours: the 1,797 records, and the records with one more.
Every added record changes the count alike, so there is a single candidate pair.

Run ``python pydp_count.py [--quick] [--out DIR] [--seed S]``.
"""

from __future__ import annotations

import releases
from casestudy import Candidate, Row, Study, cli, run_study

DATA = ("digits", "target")

STUDY = Study(
    key="pydp-count",
    title="python-dp Count",
    library="python-dp",
    api='Count(epsilon=epsilon, dtype="float").quick_result(data)',
    mechanism=releases.pydp_count,
    data="digits records (1,797)",
    neighbours="one record added or removed",
    candidates=(Candidate(releases.original(), releases.add_one(*DATA, 0), "one record added"),),
    calls=400_000,
    quick_calls=30_000,
)


def main(quick: bool = False, out: str | None = None, seed: int = 0) -> list[Row]:
    """Audit the study at epsilon 0.1, 1 and 8; write the reports; return the results rows."""
    return run_study(STUDY, quick=quick, out=out, seed=seed)


if __name__ == "__main__":
    cli(main, __doc__)
