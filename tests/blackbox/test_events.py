"""Tests of the development choice of events for mechanism audits."""

from __future__ import annotations

import numpy as np

from certify.blackbox.events import FAMILIES, choose_event
from certify.plan import rate_level


def _noisy_counts(rng: np.random.Generator, first: float, n: int) -> np.ndarray:
    """Ten integer counts plus two-sided geometric noise of scale 1 (epsilon 1 per count)."""
    p = np.exp(-1.0)
    noise = rng.geometric(1 - p, (n, 10)) - rng.geometric(1 - p, (n, 10))
    counts = np.full(10, 180.0)
    counts[0] = first
    out: np.ndarray = counts + noise
    return out


def test_a_histogram_of_mostly_unseen_values_is_not_judged_in_sample() -> None:
    """Ten noisy integer counts take thousands of distinct values; the histogram must not look perfect.

    Refitting such a histogram on every development call would score each call by its own count,
    separating the two inputs perfectly on development calls (AUC 1, a predicted bound of about
    7 where the true epsilon is 1). Judged on calls it was not fitted on, no event of the
    development choice may predict much more than the truth: the best value stays below 1.5.
    """
    rng = np.random.default_rng(0)
    dev_a, dev_b = _noisy_counts(rng, 180.0, 5000), _noisy_counts(rng, 181.0, 5000)
    choices = choose_event(
        dev_a, dev_b, [f for f in FAMILIES if f != "boosted"], reserved_a=40_000, reserved_b=40_000,
        alpha_per_rate=rate_level(0.03), delta=0.0, seed=0,
    )
    best = choices[0]
    assert best.value < 1.5
    assert best.auc < 0.9
    histograms = [c for c in choices if c.family == "histogram"]
    assert all(c.auc < 0.9 for c in histograms)
