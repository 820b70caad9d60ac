"""A planted bug of a kind real DP code has had: a DP mean whose clipping bounds come from the data.

The release (``releases.planted_mean_data_bounds``) claims epsilon-DP, for one record replaced,
for the breast-cancer "mean area" column declared to lie in [0, 5000]. Instead of clipping to the
declared bounds it clips to the data's own minimum and maximum and calibrates the Laplace noise to
that range, (max - min) / (n * epsilon): less noise than a record at a declared bound can move the
mean by, and a noise scale that itself depends on the data. Neighbours: the record farthest from
5000 replaced by 5000, the one farthest from 0 by 0, or the one farthest from 2500 by 2500.
certify must refute every claimed epsilon.

Run ``python planted_data_bounds_mean.py [--quick] [--out DIR] [--seed S]``.
"""

from __future__ import annotations

import releases
from casestudy import Candidate, Row, Study, cli, run_study

DATA = ("breast_cancer", "mean area")

STUDY = Study(
    key="planted-data-bounds-mean",
    title="Planted bug: mean with data-derived bounds",
    library=None,
    api="releases.planted_mean_data_bounds(x, n, rng, epsilon)",
    mechanism=releases.planted_mean_data_bounds,
    data='breast_cancer "mean area" (569 records), declared bounds [0, 5000]',
    neighbours="one record replaced",
    candidates=tuple(
        Candidate(releases.original(), releases.replace_one(*DATA, value), meaning)
        for value, meaning in (
            (5000.0, "the record farthest from 5000 replaced by the upper bound 5000"),
            (0.0, "the record farthest from 0 replaced by the lower bound 0"),
            (2500.0, "the record farthest from 2500 replaced by the midpoint 2500"),
        )
    ),
    calls=2_000_000,
    quick_calls=500_000,
    own_randomness=True,
)


def main(quick: bool = False, out: str | None = None, seed: int = 0) -> list[Row]:
    """Audit the study at epsilon 0.1, 1 and 8; write the reports; return the results rows."""
    return run_study(STUDY, quick=quick, out=out, seed=seed)


if __name__ == "__main__":
    cli(main, __doc__)
