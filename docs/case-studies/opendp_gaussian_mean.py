"""OpenDP's Gaussian measurement on a bounded mean of the wine "alcohol" column, at delta = 1e-6.

The release: ``mean >> gaussian`` on a sized vector of 178 values in [10, 15]. The Gaussian
measurement is zero-concentrated DP; OpenDP's own conversion (``dp.c.make_zCDP_to_approxDP``,
then ``dp.c.make_fix_delta`` at delta = 1e-6) states it as (epsilon, 1e-6)-DP, and
``dp.binary_search_chain`` sets the scale to meet each claimed epsilon. The data set's size is
public, so neighbours differ by one record replaced (symmetric distance 2): the record farthest
from 15 replaced by 15, the one farthest from 10 by 10, or the one farthest from 12.5 by 12.5.
certify audits at the same delta: its certificates bound epsilon at delta = 1e-6.

Run ``python opendp_gaussian_mean.py [--quick] [--out DIR] [--seed S]``.
"""

from __future__ import annotations

import releases
from casestudy import Candidate, Row, Study, cli, run_study

DATA = ("wine", "alcohol")

STUDY = Study(
    key="opendp-gaussian-mean",
    title="OpenDP Gaussian, bounded mean",
    library="opendp",
    api=(
        "dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(space >> dp.t.then_mean() >> "
        "dp.m.then_gaussian(scale)), delta=1e-6)(data)"
    ),
    mechanism=releases.opendp_gaussian_mean,
    data='wine "alcohol" (178 records, size public), bounds [10, 15]',
    neighbours="one record replaced (symmetric distance 2, size known)",
    candidates=tuple(
        Candidate(releases.original(), releases.replace_one(*DATA, value), meaning)
        for value, meaning in (
            (15.0, "the record farthest from 15 replaced by the upper bound 15"),
            (10.0, "the record farthest from 10 replaced by the lower bound 10"),
            (12.5, "the record farthest from 12.5 replaced by the midpoint 12.5"),
        )
    ),
    calls=150_000,
    quick_calls=12_000,
    delta=releases.GAUSSIAN_DELTA,
)


def main(quick: bool = False, out: str | None = None, seed: int = 0) -> list[Row]:
    """Audit the study at epsilon 0.1, 1 and 8 (delta 1e-6); write the reports; return the rows."""
    return run_study(STUDY, quick=quick, out=out, seed=seed)


if __name__ == "__main__":
    cli(main, __doc__)
