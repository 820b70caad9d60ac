"""The named presets of the benchmark grid: the paper's full grid and a quick subset."""

from __future__ import annotations

from typing import cast

from certify.benchmark._setting import (
    ALL_ROUTES,
    APPENDIX_EPSILONS,
    CERTIFICATE_EPSILONS,
    NULL_FLOOR_DIMENSIONS,
    PAPER_EPSILONS,
    POWER_CELLS,
    POWER_REPETITIONS,
    REPETITIONS,
    SAMPLE_SIZES,
    PrototypeName,
    Setting,
)
from certify.benchmark.mechanisms import MechanismFamily

__all__ = ["paper_settings", "presets", "quick_settings"]


def paper_settings() -> tuple[Setting, ...]:
    """Every setting of the paper's known-epsilon experiments (Sec. 6, App. B and C).

    Returns
    -------
    tuple of Setting
        ``main``: 2 prototype sets x {laplace, gaussian} x 13 epsilons x n in {30, 100, 300} x 3
        repetitions with the four descriptive routes on 40 pairs, certificates on the 10-epsilon
        subset (468 settings, 18,720 pairs, 14,400 certified pairs per test).
        ``randomized_response`` and ``anisotropic``: 2 sets x 6 epsilons x 3 n x 3 repetitions,
        MMD-TV, ROC-HT out of fold and certificates (108 settings, 4,320 pairs each).
        ``power``: the 5 power pairs of the dispersed set, Gaussian at epsilon 16 and 32 and
        Laplace at 64 and 128, 3 n, 200 repetitions, certificates only (2,400 settings,
        12,000 pair replications per test, 24,000 over both tests); each replication uses the
        main grid's Bonferroni family of 40 tests, i.e. the full Sec. 6.5 procedure.
        ``null_floor``: GaussMech at the null of both families, both sets, d in {64, 128, 256,
        512}, 3 n, 3 repetitions (144 settings, Eq. 22).

    Notes
    -----
    The paper quotes power at Gaussian 16 and Laplace 64 and counts 24,000 replications; the
    second epsilon per family is our choice (the next grid point, where power should be near 1
    from n = 100), which makes the count 24,000 over both tests.
    """
    out: list[Setting] = []
    protos: tuple[PrototypeName, PrototypeName] = ("dispersed", "clustered")
    main_families: tuple[MechanismFamily, MechanismFamily] = ("laplace", "gaussian")
    for ps in protos:
        for fam in main_families:
            for eps in PAPER_EPSILONS:
                for n in SAMPLE_SIZES:
                    for rep in range(REPETITIONS):
                        out.append(Setting("main", ps, fam, eps, n, rep, ALL_ROUTES,
                                           certificates=eps in CERTIFICATE_EPSILONS))
    appendix: tuple[MechanismFamily, MechanismFamily] = ("randomized_response", "anisotropic")
    for fam in appendix:
        for ps in protos:
            for eps in APPENDIX_EPSILONS:
                for n in SAMPLE_SIZES:
                    for rep in range(REPETITIONS):
                        out.append(Setting(fam, ps, fam, eps, n, rep, ("mmd_tv", "roc_oof"),
                                           certificates=True))
    for fam_name, eps in POWER_CELLS:
        fam = cast(MechanismFamily, fam_name)
        for n in SAMPLE_SIZES:
            for rep in range(POWER_REPETITIONS):
                out.append(Setting("power", "dispersed", fam, eps, n, rep, (), certificates=True,
                                   pair_set="power", pair_count=5, family_size=40))
    for ps in protos:
        for fam in main_families:
            for d in NULL_FLOOR_DIMENSIONS:
                for n in SAMPLE_SIZES:
                    for rep in range(REPETITIONS):
                        out.append(Setting("null_floor", ps, fam, 0.0, n, rep, ("gauss_mech",),
                                           dimension=d))
    return tuple(out)


def quick_settings() -> tuple[Setting, ...]:
    """A small subset of every experiment that runs in a few minutes on 2 cores.

    Returns
    -------
    tuple of Setting
        Dispersed prototypes, one repetition: the main grid at epsilon {0, 16, 128} x n
        {30, 100} (all routes, certificates); randomized response at {0, 8, 32} and the
        anisotropic Gaussian at {0, 32}, n = 100; the power cells Gaussian 16 and Laplace 64 at
        n in {30, 100} with
        5 repetitions; the null floor at d in {64, 512} x n in {30, 100} (Gaussian). The Laplace
        AUC reference uses 4,000 draws per class.
    """
    out: list[Setting] = []
    for fam in ("laplace", "gaussian"):
        for eps in (0.0, 16.0, 128.0):
            for n in (30, 100):
                out.append(Setting("main", "dispersed", fam, eps, n, 0, ALL_ROUTES,
                                   certificates=True, reference_draws=4_000))
    for fam in ("randomized_response", "anisotropic"):
        for eps in (0.0, 8.0, 32.0):
            if fam == "anisotropic" and eps == 8.0:
                continue
            out.append(Setting(fam, "dispersed", cast(MechanismFamily, fam), eps, 100, 0,
                               ("mmd_tv", "roc_oof"), certificates=True))
    for fam, eps in (("gaussian", 16.0), ("laplace", 64.0)):
        for n in (30, 100):
            for rep in range(5):
                out.append(Setting("power", "dispersed", cast(MechanismFamily, fam), eps, n, rep, (),
                                   certificates=True, pair_set="power", pair_count=5, family_size=40))
    for d in (64, 512):
        for n in (30, 100):
            out.append(Setting("null_floor", "dispersed", "gaussian", 0.0, n, 0, ("gauss_mech",),
                               dimension=d))
    return tuple(out)


def presets() -> dict[str, tuple[Setting, ...]]:
    """The named presets: ``"paper"`` (the full Sec. 6 grid) and ``"quick"`` (a few minutes).

    Returns
    -------
    dict of str to tuple of Setting

    Examples
    --------
    >>> p = presets()
    >>> sorted(p), len(p["paper"])
    (['paper', 'quick'], 3228)
    """
    return {"paper": paper_settings(), "quick": quick_settings()}
