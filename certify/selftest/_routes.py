"""Route coverage: Monte Carlo of every certificate route on the known-epsilon benchmark."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final, final

import attrs

from certify.stats.binomial import clopper_pearson_lower, clopper_pearson_upper

__all__ = ["NOMINAL", "ROUTES", "RouteCoverage", "run_routes"]

ROUTES: Final = ("certificate_learned", "certificate_default", "certificate_oracle", "certificate_mmd")
"""Certificate routes checked (paper logistic, certify default, exact-LR oracle, certified MMD)."""
NOMINAL: Final = 0.05
"""Nominal family-wise failure probability (confidence level 0.95)."""
_CONFIGS: Final = (("laplace", 1.0), ("gaussian", 1.0))
_DIMENSION: Final = 4
_N_SAMPLES: Final = 200
_PAIRS: Final = 4


@final
@attrs.frozen
class RouteCoverage:
    """Observed family-wise failures of one certificate route.

    Attributes
    ----------
    route : str
        The route name.
    families : int
        Independent certificate families evaluated.
    failures : int
        Families with at least one certificate above its exact reference.
    failure_possible : int
        Families in which some certificate's zero-error ceiling exceeds its reference.
    rate : float
        ``failures / families``.
    ci_low, ci_high : float
        Two-sided 95% Clopper-Pearson interval of the failure probability.
    nominal : float
        The nominal failure probability ``1 - confidence_level``.
    """

    route: str
    families: int
    failures: int
    failure_possible: int
    rate: float
    ci_low: float
    ci_high: float
    nominal: float

    @property
    def consistent(self) -> bool:
        """True when the interval's lower limit does not exceed the nominal level."""
        return self.ci_low <= self.nominal


def _one_family(family: str, epsilon_g: float, repetition: int) -> list[tuple[str, bool, bool]]:
    """Run one setting (all routes); per route: (route, failed, failure possible)."""
    from certify.benchmark.grid import Setting, compute_setting

    setting = Setting("selftest", "dispersed", family, epsilon_g, _N_SAMPLES, repetition,  # type: ignore[arg-type]
                      certificates=True, default_test=True, mmd_test=True, pair_count=_PAIRS,
                      dimension=_DIMENSION)
    frame, _ = compute_setting(setting)
    out = []
    for route, g in frame.groupby("route"):
        out.append((str(route), bool(g["exceeds_exact"].astype(bool).any()),
                    bool(g["failure_possible"].astype(bool).any())))
    return out


def run_routes(
    quick: bool, workers: int, progress: Callable[[int, int], None] | None = None
) -> tuple[tuple[RouteCoverage, ...], tuple[str, ...], float]:
    """Monte Carlo coverage of every route: (per-route coverage, settings simulated, seconds).

    Settings: Laplace and Gaussian mechanisms at global epsilon 1 on 4-dimensional dispersed
    prototypes, 200 rows per identity (100 reserved), families of 4 pairs, so the zero-error
    ceiling (about 2.8) exceeds every exact pairwise epsilon (at most 1): a violation is
    numerically possible in every family. Each repetition draws fresh data from its own seed
    sequence. Every family runs through ``FixedTest`` -> ``Protocol.seal`` -> ``evaluate``.
    ``progress`` receives ``(families done, families)``.
    """
    from joblib import Parallel, delayed

    start = time.perf_counter()
    reps = 40 if quick else 400
    tasks = [(fam, eps, rep) for fam, eps in _CONFIGS for rep in range(reps)]
    results = Parallel(n_jobs=workers, backend="loky", return_as="generator")(
        delayed(_one_family)(*t) for t in tasks
    )
    counts: dict[str, list[int]] = {r: [0, 0, 0] for r in ROUTES}
    for done, res in enumerate(results, start=1):
        if progress is not None:
            progress(done, len(tasks))
        for route, failed, possible in res:
            c = counts.setdefault(route, [0, 0, 0])
            c[0] += 1
            c[1] += int(failed)
            c[2] += int(possible)
    routes = []
    for route in ROUTES:
        total, failed, possible = counts[route]
        low = clopper_pearson_lower(failed, total, 0.025) if failed > 0 else 0.0
        routes.append(RouteCoverage(route, total, failed, possible, failed / total, low,
                                    clopper_pearson_upper(failed, total, 0.025), NOMINAL))
    settings = tuple(f"{fam} epsilon_g={eps:g}, d={_DIMENSION}, n={_N_SAMPLES}, {_PAIRS} pairs"
                     for fam, eps in _CONFIGS)
    return tuple(routes), settings, float(time.perf_counter() - start)
