"""Laplace and Gaussian releases of current DP libraries, set up as Delta-Siege audited them.

Delta-Siege (Lokna et al., CCS 2023, ``scripts/run_benchmarks.py``) audits each library's
scalar Laplace and Gaussian mechanism on the inputs 0 and 1 with sensitivity 1, at epsilon in
{0.1, 1} (Laplace: delta 0; Gaussian: delta in {1e-6, 1e-3, 0.1}), calibrating the noise with
the library's own parameters where it has them and with the classic Gaussian sigma
``sqrt(2 ln(1.25 / delta)) / epsilon`` where the library takes a standard deviation (Opacus,
whose ``DPOptimizer.add_noise`` adds the noise to a clipped sum, here the input itself, with
``secure_mode=True`` as Delta-Siege ran it).
:func:`mechanism` builds one such release as a certify mechanism ``mech(x, n, rng)``.

Randomness: OpenDP and python-dp draw from the operating system's generator (each call is a
fresh release; the audit is reproducible only up to sampling error); diffprivlib's
``random_state`` and Opacus' ``torch.Generator`` are seeded from ``rng``.

Libraries: OpenDP (``opendp``) and python-dp (``pydp``) come with certify's ``test`` extra;
diffprivlib (``diffprivlib-fix``, the maintained release: ``diffprivlib`` 0.6.6 fails to import
with scikit-learn 1.7) and Opacus come with the ``libraries`` extra.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

LAPLACE_GRID: Final = ((0.1, 0.0), (1.0, 0.0))
GAUSS_GRID: Final = tuple((e, d) for e in (0.1, 1.0) for d in (1e-6, 1e-3, 0.1))
LIBRARIES: Final = {
    "opendp-laplace": ("opendp", LAPLACE_GRID),
    "pydp-laplace": ("pydp", LAPLACE_GRID),
    "diffprivlib-laplace": ("diffprivlib", LAPLACE_GRID),
    "opendp-gaussian": ("opendp", GAUSS_GRID),
    "pydp-gaussian": ("pydp", GAUSS_GRID),
    "diffprivlib-gaussian": ("diffprivlib", GAUSS_GRID),
    "diffprivlib-gaussian-analytic": ("diffprivlib", GAUSS_GRID),
    "opacus-gaussian": ("opacus", GAUSS_GRID),
}
"""Each release, the module it needs and its (epsilon, delta) grid."""

Mechanism = Callable[[NDArray[Any], int, np.random.Generator], NDArray[np.float64]]


def classic_sigma(epsilon: float, delta: float) -> float:
    """The classic Gaussian mechanism's sigma for sensitivity 1 (Dwork and Roth, Thm A.1)."""
    return math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def version(name: str) -> str:
    """The installed version of the library a release needs."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    module = LIBRARIES[name][0]
    for dist in {"opendp": ("opendp",), "pydp": ("python-dp",),
                 "diffprivlib": ("diffprivlib-fix", "diffprivlib"), "opacus": ("opacus",)}[module]:
        try:
            return f"{dist} {dist_version(dist)}"
        except PackageNotFoundError:
            continue
    return "not installed"


@functools.cache
def _opendp(kind: str, epsilon: float, delta: float) -> Any:
    """An OpenDP vector measurement calibrated to (epsilon, delta) by OpenDP's binary search."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    if kind == "laplace":
        return dp.binary_search_chain(
            lambda s: dp.m.make_laplace(domain, dp.l1_distance(T=float), scale=s), d_in=1.0,
            d_out=epsilon,
        )

    def approx(s: float) -> Any:
        gauss = dp.m.make_gaussian(domain, dp.l2_distance(T=float), scale=s)
        return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(gauss), delta=delta)

    return dp.binary_search_chain(approx, d_in=1.0, d_out=(epsilon, delta))


def mechanism(name: str, epsilon: float, delta: float) -> Mechanism:
    """The release ``name`` at (epsilon, delta) as a certify mechanism on a scalar input.

    Raises
    ------
    ImportError
        If the library is not installed (``pip install certify[libraries]``).
    """
    library = LIBRARIES[name][0]
    if library == "opendp":
        measurement = _opendp(name.split("-")[1], epsilon, delta)

        def opendp_release(x: NDArray[Any], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
            return np.asarray(measurement([float(x[0])] * n), dtype=np.float64)

        return opendp_release
    if library == "pydp":
        import pydp.algorithms.numerical_mechanisms as nm  # type: ignore[import-untyped]

        noise = (nm.LaplaceMechanism(epsilon=epsilon, sensitivity=1.0) if name == "pydp-laplace"
                 else nm.GaussianMechanism(epsilon=epsilon, delta=delta, sensitivity=1.0))

        def pydp_release(x: NDArray[Any], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
            value = float(x[0])
            return np.fromiter((noise.add_noise(value) for _ in range(n)), np.float64, count=n)

        return pydp_release
    if library == "diffprivlib":
        from diffprivlib import mechanisms as dm  # type: ignore[import-untyped]

        def diffprivlib_release(x: NDArray[Any], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
            state = np.random.RandomState(int(rng.integers(2**32)))
            if name == "diffprivlib-laplace":
                noise = dm.Laplace(epsilon=epsilon, sensitivity=1.0, random_state=state)
            elif name == "diffprivlib-gaussian":
                noise = dm.Gaussian(epsilon=epsilon, delta=delta, sensitivity=1.0, random_state=state)
            else:
                noise = dm.GaussianAnalytic(epsilon=epsilon, delta=delta, sensitivity=1.0,
                                            random_state=state)
            value = float(x[0])
            return np.fromiter((noise.randomise(value) for _ in range(n)), np.float64, count=n)

        return diffprivlib_release
    import torch
    from opacus.optimizers import DPOptimizer

    sigma = classic_sigma(epsilon, delta)

    def opacus_release(x: NDArray[Any], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
        # float32, as torch's default and Delta-Siege's reference tensor; secure_mode as it ran
        generator = torch.Generator().manual_seed(int(rng.integers(2**63)))
        weight = torch.nn.Parameter(torch.zeros(n))
        optimizer = DPOptimizer(torch.optim.SGD([weight], lr=1.0), noise_multiplier=sigma,
                                max_grad_norm=1.0, expected_batch_size=1, generator=generator,
                                secure_mode=True)
        weight.summed_grad = torch.full((n,), float(x[0]))  # the clipped sum add_noise reads
        optimizer.add_noise()
        assert weight.grad is not None
        return weight.grad.detach().numpy().astype(np.float64)

    return opacus_release
