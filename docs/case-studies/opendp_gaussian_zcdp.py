"""OpenDP's Gaussian measurement on a bounded mean, under the claim OpenDP states: rho-zCDP.

The release: ``mean >> gaussian(scale)`` on a sized vector of the wine "alcohol" column (178
values in [10, 15]); ``dp.binary_search_chain`` sets the scale so that the measurement's own
privacy map states rho = 0.5 at one record replaced (symmetric distance 2). certify tests that
map's value, ``ZCDPClaim(0.5)``, with no conversion to (epsilon, delta): a correct release must
end Inconclusive, with certified rho_lower (and mu_lower, the Gaussian being exactly 1-GDP)
below the truth. Neighbours: the record farthest from 15 replaced by 15, the one farthest from
10 by 10, or the one farthest from 12.5 by 12.5.

Run ``python opendp_gaussian_zcdp.py [--quick] [--out DIR] [--seed S]``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import releases
from casestudy import cli, replacements
from curves import CurveRow, CurveStudy, run_curve_study

import certify as cf

DATA = ("wine", "alcohol")
RHO = 0.5


def claims() -> Sequence[cf.AnyClaim]:
    """OpenDP's own statement: the privacy map's rho at d_in = 2."""
    return [cf.ZCDPClaim(releases.opendp_stated_rho(RHO))]


STUDY = CurveStudy(
    key="opendp-gaussian-zcdp",
    title="OpenDP Gaussian, bounded mean, zCDP",
    library="opendp",
    api="space >> dp.t.then_mean() >> dp.m.then_gaussian(scale)  # rho-zCDP at d_in = 2",
    mechanism=functools.partial(releases.opendp_gaussian_mean_zcdp, rho=RHO),
    data='wine "alcohol" (178 records, size public), bounds [10, 15]',
    neighbours="one record replaced (symmetric distance 2, size known)",
    candidates=replacements(*DATA, (15.0, 10.0, 12.5)),
    claims=claims,
    calls=200_000,
    quick_calls=12_000,
)


def main(quick: bool = False, out: str | None = None, seed: int = 0) -> list[CurveRow]:
    """Audit the release under its zCDP claim; write the report; return the rows."""
    return run_curve_study(STUDY, quick=quick, out=out, seed=seed)


if __name__ == "__main__":
    cli(main, __doc__)
