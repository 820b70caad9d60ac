"""Coverage self-test: certificate families must fail no more often than their level allows.

Monte Carlo over mechanisms with known epsilon (paper Sec. 6.1), at settings where a violation
is numerically possible (the zero-error ceiling of every test exceeds the exact pairwise
epsilon): small global epsilon, few dimensions, many reserved rows and small families. Every
family runs through the real path, ``FixedTest`` -> ``Protocol.seal`` -> ``evaluate``, for
each certificate route (the paper's logistic test, certify's default test, the exact
likelihood-ratio oracle, the certified MMD route). A family fails when any of its certificates
exceeds its exact reference; the observed family-wise failure rate is compared with the nominal level
``1 - confidence_level``.
"""

from __future__ import annotations

from typing import Final, final

import attrs

from certify.stats.binomial import clopper_pearson_lower, clopper_pearson_upper

__all__ = ["RouteCoverage", "SelftestReport", "run_selftest"]

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


@final
@attrs.frozen
class SelftestReport:
    """Result of :func:`run_selftest`.

    Attributes
    ----------
    routes : tuple of RouteCoverage
        One entry per certificate route.
    settings : tuple of str
        The mechanism settings simulated.
    seconds : float
        Wall time.
    """

    routes: tuple[RouteCoverage, ...]
    settings: tuple[str, ...]
    seconds: float

    @property
    def consistent(self) -> bool:
        """True when every route's observed rate is consistent with the nominal level."""
        return all(r.consistent for r in self.routes)

    def to_text(self) -> str:
        """A plain-text table."""
        lines = [f"coverage self-test ({'; '.join(self.settings)}), {self.seconds:.0f} s",
                 f"{'route':22s} {'families':>8s} {'possible':>8s} {'failures':>8s} {'rate':>7s} "
                 f"{'95% CI':>17s} {'nominal':>7s}  verdict"]
        for r in self.routes:
            lines.append(
                f"{r.route:22s} {r.families:8d} {r.failure_possible:8d} {r.failures:8d} {r.rate:7.4f} "
                f"[{r.ci_low:.4f}, {r.ci_high:.4f}] {r.nominal:7.3f}  "
                f"{'consistent' if r.consistent else 'TOO MANY FAILURES'}"
            )
        return "\n".join(lines)


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


def run_selftest(quick: bool = True, *, workers: int = 2) -> SelftestReport:
    """Monte Carlo check that certificate families fail at most at their nominal rate.

    Parameters
    ----------
    quick : bool, default True
        40 families per mechanism and route (about a minute on 2 cores) instead of 400.
    workers : int, default 2
        Parallel processes.

    Returns
    -------
    SelftestReport
        Per route: families, failures, the observed rate and its 95% Clopper-Pearson interval.

    Notes
    -----
    Settings: Laplace and Gaussian mechanisms at global epsilon 1 on 4-dimensional dispersed
    prototypes, 200 rows per identity (100 reserved), families of 4 pairs (alpha per rate
    0.00625), so the zero-error ceiling (about 2.8) exceeds every exact pairwise epsilon (at
    most 1): a violation is numerically possible in every family. Each repetition draws fresh
    data from its own seed sequence. "Consistent" means the lower limit of the two-sided 95%
    interval does not exceed the nominal 0.05; Clopper-Pearson bounds are conservative, so
    observed rates well below 0.05 are expected and do not indicate a problem.

    Examples
    --------
    >>> report = run_selftest(quick=True)  # doctest: +SKIP
    >>> report.consistent  # doctest: +SKIP
    True
    """
    import time

    from joblib import Parallel, delayed

    start = time.perf_counter()
    reps = 40 if quick else 400
    tasks = [(fam, eps, rep) for fam, eps in _CONFIGS for rep in range(reps)]
    results = Parallel(n_jobs=workers, backend="loky")(delayed(_one_family)(*t) for t in tasks)
    counts: dict[str, list[int]] = {r: [0, 0, 0] for r in ROUTES}
    for res in results:
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
    return SelftestReport(tuple(routes), settings, float(time.perf_counter() - start))

