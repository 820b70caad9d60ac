"""ROC-HT out of fold at an exact null (paper Sec. 6.3, Table 4): +inf conversions without a corner."""

from __future__ import annotations

import numpy as np
import pytest

from certify.benchmark.mechanisms import Null
from certify.benchmark.pairs import benchmark_pairs
from certify.benchmark.prototypes import dispersed
from certify.methods import roc_oof


@pytest.mark.slow
def test_null_roc_converts_to_infinity_at_the_paper_rate_without_exact_corners() -> None:
    """Laplace null with the epsilon_g = 0.1 noise law, n = 100, 40 pairs: about 62% +inf, no corner.

    The paper's Table 4 reports 24.7 of 40 infinite conversions at n = 100 (62%) and none with the
    exact (0, 1) corner, with median AUC 0.499. Each pair's conversion is roughly Bernoulli(0.62),
    so over 40 pairs the count has standard deviation about 3.1; the test accepts 24.7 +- 9
    (about 3 standard deviations) and a median AUC within 0.02 of 0.5 (the median of 40 AUCs has
    standard error about 0.01 at n = 100).
    """
    protos = dispersed()
    mechanism = Null(protos, "laplace")
    rng = np.random.default_rng(20261130)
    values, aucs, corners = [], [], 0
    for i, j in benchmark_pairs(protos):
        x_a = mechanism.sample(i, 100, rng)
        x_b = mechanism.sample(j, 100, rng)
        est = roc_oof(x_a, x_b, seed=0)
        values.append(est.epsilon_estimate)
        aucs.append(est.auc)
        corners += bool(est.exact_corner)
    n_inf = sum(np.isinf(values))
    assert 24.7 - 9 <= n_inf <= 24.7 + 9
    assert corners == 0
    assert abs(float(np.median(aucs)) - 0.5) <= 0.02
