"""python-dp's Gaussian mechanism on a count, under the privacy profile its noise states.

The release: ``GaussianMechanism(epsilon=1, delta=1e-6, sensitivity=1).add_noise(count)`` on the
number of records of scikit-learn's digits (1797). The library calibrates the noise's standard
deviation for (1, 1e-6) and states it (``mechanism.std``); Gaussian noise of that deviation on a
sensitivity-1 count is exactly ``(1 / std)``-GDP, whose privacy profile ``delta(epsilon)`` is the
curve the release stands for. certify tests that profile, and side by side the (1, 1e-6) point
the library was asked for. Neighbours: one record added.

Run ``python pydp_gaussian_profile.py [--quick] [--out DIR] [--seed S]``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import releases
from casestudy import Candidate, cli
from curves import CurveRow, CurveStudy, run_curve_study

import certify as cf

EPSILON, DELTA = 1.0, releases.GAUSSIAN_DELTA


def claims() -> Sequence[cf.AnyClaim]:
    """The profile of the stated deviation, then the stated (epsilon, delta) point."""
    std = releases.pydp_gaussian_std(EPSILON, DELTA)
    profile = cf.ProfileClaim(
        releases.gaussian_profile(1.0 / std),
        name=f"python-dp GaussianMechanism({EPSILON:g}, {DELTA:g}): N(0, {std:g}^2) on a count",
    )
    return [profile, cf.Claim(EPSILON, DELTA)]


STUDY = CurveStudy(
    key="pydp-gaussian-profile",
    title="python-dp Gaussian mechanism, count",
    library="python-dp",
    api="GaussianMechanism(epsilon=1.0, delta=1e-6, sensitivity=1.0).add_noise(count)",
    mechanism=functools.partial(releases.pydp_gaussian_count, epsilon=EPSILON, delta=DELTA),
    data="digits records (1797)",
    neighbours="one record added or removed",
    candidates=(
        Candidate(releases.original(), releases.add_one("digits", "target", 0), "one record added"),
    ),
    claims=claims,
    calls=1_000_000,
    quick_calls=100_000,
)


def main(quick: bool = False, out: str | None = None, seed: int = 0) -> list[CurveRow]:
    """Audit the release under its profile and its (epsilon, delta) point; return the rows."""
    return run_curve_study(STUDY, quick=quick, out=out, seed=seed)


if __name__ == "__main__":
    cli(main, __doc__)
