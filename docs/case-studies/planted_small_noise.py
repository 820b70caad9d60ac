"""A planted bug: a Gaussian mean with 20% too little noise, under curve claims and a point claim.

The release (``releases.planted_small_noise_mean``) claims 1-GDP (equivalently 0.5-zCDP, and the
1-GDP privacy profile) for one record replaced in the wine "alcohol" column (178 values in
[10, 15]), but adds 0.8 times the noise that needs: it is truly 1.25-GDP. Side by side at the
same calls, certify tests the (epsilon, 1e-6) point that 1-GDP implies, then the three curves.
The point lives in events of probability near 1e-6 and is not refutable at this budget; each
curve is refuted from events of moderate probability.

Run ``python planted_small_noise.py [--quick] [--out DIR] [--seed S]``.
"""

from __future__ import annotations

from collections.abc import Sequence

import releases
from casestudy import cli, replacements
from curves import CurveRow, CurveStudy, run_curve_study

import certify as cf

DATA = ("wine", "alcohol")


def claims() -> Sequence[cf.AnyClaim]:
    """The implied point first, then the curves (later evaluations use stricter levels)."""
    gdp = cf.GDPClaim(1.0)
    return [
        gdp.implied_point(releases.GAUSSIAN_DELTA),
        gdp,
        cf.ZCDPClaim(0.5),
        cf.ProfileClaim(releases.gaussian_profile(1.0), name="the 1-GDP profile"),
    ]


STUDY = CurveStudy(
    key="planted-small-noise",
    title="Planted bug: Gaussian mean, noise 20% too small",
    library=None,
    api="releases.planted_small_noise_mean(x, n, rng, mu=1.0, shortfall=0.8)",
    mechanism=releases.planted_small_noise_mean,
    data='wine "alcohol" (178 records, size public), bounds [10, 15]',
    neighbours="one record replaced",
    candidates=replacements(*DATA, (15.0, 10.0)),
    claims=claims,
    calls=2_000_000,
    quick_calls=1_000_000,
    own_randomness=True,
    expect_refuted=True,
)


def main(quick: bool = False, out: str | None = None, seed: int = 0) -> list[CurveRow]:
    """Audit the planted bug under the point claim and the three curves; return the rows."""
    return run_curve_study(STUDY, quick=quick, out=out, seed=seed)


if __name__ == "__main__":
    cli(main, __doc__)
