"""OpenDP's Laplace measurement on a bounded sum of the breast-cancer "mean radius" column.

The release: ``clamp((5, 30)) >> sum >> laplace`` on an unsized float vector, the scale set by
``dp.binary_search_chain`` so that the measurement is epsilon-DP for one record added or removed
(symmetric distance 1). Neighbours: the 569 radii, and the radii with one record added at the
upper bound, at the lower bound or at the midpoint; development calls choose the pair.

Run ``python opendp_laplace_sum.py [--quick] [--out DIR] [--seed S]``.
"""

from __future__ import annotations

import releases
from casestudy import Candidate, Row, Study, cli, run_study

DATA = ("breast_cancer", "mean radius")

STUDY = Study(
    key="opendp-laplace-sum",
    title="OpenDP Laplace, bounded sum",
    library="opendp",
    api="(space >> dp.t.then_clamp((5.0, 30.0)) >> dp.t.then_sum() >> dp.m.then_laplace(scale))(data)",
    mechanism=releases.opendp_laplace_sum,
    data='breast_cancer "mean radius" (569 records), bounds [5, 30]',
    neighbours="one record added or removed (symmetric distance 1)",
    candidates=tuple(
        Candidate(releases.original(), releases.add_one(*DATA, value), meaning)
        for value, meaning in (
            (30.0, "one record added at the upper bound 30"),
            (5.0, "one record added at the lower bound 5"),
            (17.5, "one record added at the midpoint 17.5"),
        )
    ),
    calls=200_000,
    quick_calls=12_000,
)


def main(quick: bool = False, out: str | None = None, seed: int = 0) -> list[Row]:
    """Audit the study at epsilon 0.1, 1 and 8; write the reports; return the results rows."""
    return run_study(STUDY, quick=quick, out=out, seed=seed)


if __name__ == "__main__":
    cli(main, __doc__)
