"""One DP-SGD step, under the privacy profile dp_accounting's PLD accountant states for it.

The release: the noisy gradient sum of one full-batch DP-SGD step of logistic regression on the
first 64 records of scikit-learn's breast_cancer (30 standardized features and a bias, the zero
model): every per-example gradient clipped to norm C = 1, summed, plus Gaussian noise of
standard deviation sigma C with noise multiplier sigma = 1 (``releases.dpsgd_step``). The claim
is the profile ``delta(epsilon)`` of ``dp_accounting``'s ``PLDAccountant`` after one
``GaussianDpEvent(1.0)``, the accountant DP-SGD users read their guarantee from (installed by
the ``case-studies`` extra; without it the study tests the exact profile of one Gaussian step,
which the accountant approximates from above, and says so). Neighbours: the batch with and
without one record (every clipped gradient has norm 1 here).

The step is written in NumPy, not run through Opacus: Opacus needs PyTorch, which the project's
test installation does not carry (a CPU build of several hundred MB, and a CUDA build of several
GB by default from PyPI), and one step of its ``DPOptimizer`` releases exactly this vector up to
the post-processing ``-lr / batch``: per-sample clipping by the flat norm, a sum, and
``normal(0, noise_multiplier * max_grad_norm)`` noise.

Run ``python dpsgd_step.py [--quick] [--out DIR] [--seed S]``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import releases
from casestudy import Candidate, cli
from curves import CurveRow, CurveStudy, run_curve_study

import certify as cf

NOISE_MULTIPLIER = 1.0


def claims() -> Sequence[cf.AnyClaim]:
    """dp_accounting's profile of one Gaussian step at this noise multiplier."""
    profile, name = releases.dpsgd_profile(NOISE_MULTIPLIER)
    return [cf.ProfileClaim(profile, name=name)]


def _candidates() -> tuple[Candidate, ...]:
    """The batch against the batch without one record (the largest gradient, and two others)."""
    first = int(releases.remove_one()[0])
    others = [i for i in (0, 1, 2) if i != first][:2]
    return tuple(
        Candidate([-1.0], [float(i)], f"the batch without record {i}") for i in (first, *others)
    )


STUDY = CurveStudy(
    key="dpsgd-step",
    title="One DP-SGD step (NumPy), logistic regression",
    library="dp-accounting",
    api="clip(grad_i, C) summed + normal(0, sigma * C); PLDAccountant().compose(GaussianDpEvent(sigma))",
    mechanism=functools.partial(releases.dpsgd_step, noise_multiplier=NOISE_MULTIPLIER, clip=1.0),
    data="breast_cancer, first 64 records, 30 standardized features and a bias",
    neighbours="one record added or removed from the batch",
    candidates=_candidates(),
    claims=claims,
    calls=1_000_000,
    quick_calls=40_000,
    own_randomness=True,
    inputs="`[-1]` is the whole batch, `[i]` the batch without record i",
)


def main(quick: bool = False, out: str | None = None, seed: int = 0) -> list[CurveRow]:
    """Audit the step under the accountant's profile; return the rows."""
    return run_curve_study(STUDY, quick=quick, out=out, seed=seed)


if __name__ == "__main__":
    cli(main, __doc__)
