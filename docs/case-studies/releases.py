"""Releases of real DP libraries on scikit-learn's bundled data, as mechanisms certify can audit.

Every function here is a mechanism ``mechanism(x, n, rng)``: it makes ``n`` independent releases
of one library call on the data set that ``x`` denotes, and returns them as an array.

What ``x`` denotes
------------------
A data set is one column of a bundled scikit-learn data set (``D``), changed in at most one
record. ``x`` holds two numbers ``[i, v]``:

- ``[-1, 0]`` is ``D`` itself;
- ``[i, v]`` with ``0 <= i < len(D)`` is ``D`` with record ``i`` replaced by ``v``;
- ``[len(D), v]`` is ``D`` with one record ``v`` added.

So ``[-1, 0]`` and ``[i, v]`` are neighbouring data sets under replacement of one record, and
``[-1, 0]`` and ``[len(D), v]`` under addition or removal of one record. Which of the two the
library's epsilon refers to is stated per mechanism; a study only pairs inputs that are
neighbours under that relation. (The whole column as ``x`` would work too, but certify labels
inputs by their values, and labels of hundreds of numbers make unreadable reports.)

Randomness
----------
OpenDP and python-dp draw their noise from the operating system's secure generator, not from
``rng``. Each call is still a fresh, independent release, which is all certify's guarantee needs,
but the outputs do not depend on the seed: rerunning an audit reproduces its numbers only up to
sampling error. The planted bug draws from ``rng`` and is reproducible bit for bit.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "DATASETS",
    "GAUSSIAN_DELTA",
    "add_one",
    "column",
    "data_set",
    "dpsgd_batch",
    "dpsgd_profile",
    "dpsgd_step",
    "GRID",
    "gaussian_profile",
    "opendp_gaussian_mean",
    "opendp_gaussian_mean_zcdp",
    "opendp_stated_rho",
    "opendp_histogram",
    "opendp_laplace_sum",
    "on_grid",
    "original",
    "planted_mean_data_bounds",
    "planted_small_noise_mean",
    "pydp_bounded_mean",
    "pydp_bounded_sum",
    "pydp_count",
    "pydp_gaussian_count",
    "pydp_gaussian_std",
    "remove_one",
    "replace_one",
]

DATASETS: Final = ("breast_cancer", "wine", "digits")
"""The bundled scikit-learn data sets the studies use."""

GAUSSIAN_DELTA: Final = 1e-6
"""The delta at which the Gaussian mean's epsilon is stated (and audited)."""

ORIGINAL: Final = (-1, 0)
"""The input that denotes the unchanged data set."""


# -- data ---------------------------------------------------------------------------------------


@functools.cache
def column(dataset: str, name: str) -> NDArray[Any]:
    """One column of a bundled scikit-learn data set (``"target"`` for the labels), read-only."""
    from sklearn import datasets

    loaders: dict[str, Callable[[], Any]] = {
        "breast_cancer": datasets.load_breast_cancer,
        "wine": datasets.load_wine,
        "digits": datasets.load_digits,
    }
    if dataset not in loaders:
        raise ValueError(f"dataset must be one of {DATASETS}; got {dataset!r}.")
    bunch = loaders[dataset]()
    if name == "target":
        values: NDArray[Any] = np.asarray(bunch.target, dtype=np.int64)
    else:
        names = list(bunch.feature_names)
        if name not in names:
            raise ValueError(f"{dataset} has no column {name!r}; its columns are {names}.")
        values = np.asarray(bunch.data[:, names.index(name)], dtype=np.float64)
    values.setflags(write=False)
    return values


def data_set(x: NDArray[Any], dataset: str, name: str) -> NDArray[Any]:
    """The data set that the input ``x = [i, v]`` denotes (see the module docstring)."""
    base = column(dataset, name)
    if x.shape != (2,):
        raise ValueError(f"x must be [i, v] (two numbers); got {x.tolist()!r}.")
    i, v = int(x[0]), x[1]
    if i != x[0] or not -1 <= i <= base.size:
        raise ValueError(f"x[0] must be an integer in [-1, {base.size}]; got {x[0]!r}.")
    if np.issubdtype(base.dtype, np.integer) and v != int(v):
        raise ValueError(f"{dataset}:{name} holds integers; got the record {v!r}.")
    if i == -1:
        return base
    if i == base.size:
        return np.append(base, np.asarray([v], dtype=base.dtype))
    out = base.copy()
    out[i] = v
    return out


def original() -> list[float]:
    """The input denoting the unchanged data set."""
    return [ORIGINAL[0], ORIGINAL[1]]


def add_one(dataset: str, name: str, value: float) -> list[float]:
    """The input denoting the data set with one record ``value`` added."""
    return [float(column(dataset, name).size), float(value)]


def replace_one(dataset: str, name: str, value: float) -> list[float]:
    """The input denoting the data set with its record farthest from ``value`` replaced by it."""
    base = column(dataset, name)
    i = int(np.argmax(np.abs(base - value)))
    return [float(i), float(value)]


def _releases(release: Callable[[], object], n: int) -> NDArray[np.float64]:
    """``n`` calls of one library release, as a float array (vectors become rows)."""
    return np.asarray([release() for _ in range(n)], dtype=np.float64)


# -- OpenDP -------------------------------------------------------------------------------------


@functools.cache
def _opendp_laplace_sum(epsilon: float, lower: float, upper: float) -> Any:
    """OpenDP: clamp, sum, Laplace noise; the scale found by OpenDP's own search for epsilon."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    bounded_sum = space >> dp.t.then_clamp((lower, upper)) >> dp.t.then_sum()  # type: ignore[no-untyped-call]
    return dp.binary_search_chain(
        lambda scale: bounded_sum >> dp.m.then_laplace(scale=scale), d_in=1, d_out=epsilon
    )


def opendp_laplace_sum(
    x: NDArray[Any],
    n: int,
    rng: np.random.Generator,
    epsilon: float = 1.0,
    dataset: str = "breast_cancer",
    name: str = "mean radius",
    lower: float = 5.0,
    upper: float = 30.0,
) -> NDArray[np.float64]:
    """OpenDP's Laplace measurement on a clamped sum: epsilon-DP, one record added or removed.

    The measurement is ``clamp >> sum >> laplace`` on an unsized float vector with the
    symmetric distance at ``d_in = 1``; ``binary_search_chain`` sets the scale to meet
    ``epsilon``.
    """
    data = data_set(x, dataset, name)
    measurement = _opendp_laplace_sum(float(epsilon), float(lower), float(upper))
    return _releases(lambda: measurement(data), n)


@functools.cache
def _opendp_gaussian_mean(epsilon: float, delta: float, lower: float, upper: float, size: int) -> Any:
    """OpenDP: mean of sized bounded data, Gaussian noise, zCDP converted to (epsilon, delta)."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    space = (
        dp.vector_domain(dp.atom_domain(bounds=(lower, upper), nan=False), size=size),
        dp.symmetric_distance(),
    )
    bounded_mean = space >> dp.t.then_mean()  # type: ignore[no-untyped-call]

    def approx_dp(scale: float) -> Any:
        zcdp = bounded_mean >> dp.m.then_gaussian(scale=scale)
        return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(zcdp), delta=delta)

    # replacing one record of a sized data set is a symmetric distance of 2
    return dp.binary_search_chain(approx_dp, d_in=2, d_out=(epsilon, delta))


def opendp_gaussian_mean(
    x: NDArray[Any],
    n: int,
    rng: np.random.Generator,
    epsilon: float = 1.0,
    delta: float = GAUSSIAN_DELTA,
    dataset: str = "wine",
    name: str = "alcohol",
    lower: float = 10.0,
    upper: float = 15.0,
) -> NDArray[np.float64]:
    """OpenDP's Gaussian measurement on a bounded mean: (epsilon, delta)-DP, one record replaced.

    The data set's size is public (a sized vector domain), so neighbours differ by replacing one
    record (symmetric distance 2). The Gaussian measurement is zero-concentrated DP; OpenDP's
    ``make_zCDP_to_approxDP`` and ``make_fix_delta`` state it as (epsilon, delta)-DP, and
    ``binary_search_chain`` sets the scale to meet ``(epsilon, delta)``. The data must lie in
    the bounds (OpenDP checks the domain; the studies only replace records by values inside).
    """
    data = data_set(x, dataset, name)
    measurement = _opendp_gaussian_mean(
        float(epsilon), float(delta), float(lower), float(upper), int(data.size)
    )
    return _releases(lambda: measurement(data), n)


@functools.cache
def _opendp_histogram(epsilon: float, categories: tuple[int, ...]) -> Any:
    """OpenDP: counts by known categories, Laplace noise on the count vector."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    space = dp.vector_domain(dp.atom_domain(T=dp.i32)), dp.symmetric_distance()
    counts = space >> dp.t.then_count_by_categories(categories=list(categories), null_category=False)
    return dp.binary_search_chain(
        lambda scale: counts >> dp.m.then_laplace(scale=scale), d_in=1, d_out=epsilon
    )


def opendp_histogram(
    x: NDArray[Any],
    n: int,
    rng: np.random.Generator,
    epsilon: float = 1.0,
    dataset: str = "digits",
    name: str = "target",
    categories: Sequence[int] = tuple(range(10)),
) -> NDArray[np.float64]:
    """OpenDP's DP histogram: counts by category plus Laplace noise; epsilon-DP, one record added.

    ``count_by_categories`` (L1 sensitivity 1 at symmetric distance 1) chained with the vector
    Laplace measurement, which samples discrete Laplace noise for integer counts. Returns one row
    of ``len(categories)`` noisy counts per call.
    """
    data = np.ascontiguousarray(data_set(x, dataset, name), dtype=np.int32)
    measurement = _opendp_histogram(float(epsilon), tuple(int(c) for c in categories))
    return _releases(lambda: measurement(data), n)


# -- Google's differential privacy library (python-dp) ------------------------------------------


def pydp_bounded_sum(
    x: NDArray[Any],
    n: int,
    rng: np.random.Generator,
    epsilon: float = 1.0,
    dataset: str = "breast_cancer",
    name: str = "mean radius",
    lower: float = 5.0,
    upper: float = 30.0,
) -> NDArray[np.float64]:
    """python-dp's ``BoundedSum``: epsilon-DP when one record (one user) is added or removed.

    Each call is ``quick_result(data)``, which resets the privacy budget and releases with all of
    it: a fresh release per call.
    """
    from pydp.algorithms.laplacian import BoundedSum  # type: ignore[import-untyped]

    data = data_set(x, dataset, name).tolist()
    algorithm = BoundedSum(epsilon=float(epsilon), lower_bound=lower, upper_bound=upper, dtype="float")
    return _releases(lambda: algorithm.quick_result(data), n)


def pydp_bounded_mean(
    x: NDArray[Any],
    n: int,
    rng: np.random.Generator,
    epsilon: float = 1.0,
    dataset: str = "wine",
    name: str = "alcohol",
    lower: float = 10.0,
    upper: float = 15.0,
) -> NDArray[np.float64]:
    """python-dp's ``BoundedMean``: epsilon-DP when one record (one user) is added or removed."""
    from pydp.algorithms.laplacian import BoundedMean

    data = data_set(x, dataset, name).tolist()
    algorithm = BoundedMean(epsilon=float(epsilon), lower_bound=lower, upper_bound=upper, dtype="float")
    return _releases(lambda: algorithm.quick_result(data), n)


def pydp_count(
    x: NDArray[Any],
    n: int,
    rng: np.random.Generator,
    epsilon: float = 1.0,
    dataset: str = "digits",
    name: str = "target",
) -> NDArray[np.float64]:
    """python-dp's ``Count`` of records: epsilon-DP when one record (one user) is added or removed."""
    from pydp.algorithms.laplacian import Count

    data = data_set(x, dataset, name).astype(np.float64).tolist()
    algorithm = Count(epsilon=float(epsilon), dtype="float")
    return _releases(lambda: algorithm.quick_result(data), n)


# -- a planted bug ------------------------------------------------------------------------------


def planted_mean_data_bounds(
    x: NDArray[Any],
    n: int,
    rng: np.random.Generator,
    epsilon: float = 1.0,
    dataset: str = "breast_cancer",
    name: str = "mean area",
    lower: float = 0.0,
    upper: float = 5000.0,
) -> NDArray[np.float64]:
    """A DP mean with a bug real code has had: clipping bounds computed from the data.

    It claims epsilon-DP for one record replaced, for data declared to lie in
    ``[lower, upper]``. The correct release clips to the declared bounds and adds Laplace noise
    of scale ``(upper - lower) / (len(data) * epsilon)``. This one "tightens" the bounds to the
    data's own minimum and maximum, which shrinks the noise when the data are far from the
    declared bounds; the noise scale then depends on the data and a record moved to a declared
    bound shifts the mean by more than the noise was calibrated for.
    """
    data = data_set(x, dataset, name).astype(np.float64)
    if data.min() < lower or data.max() > upper:
        raise ValueError(f"the data must lie in the declared bounds [{lower}, {upper}].")
    low, high = float(data.min()), float(data.max())  # the bug: should be (lower, upper)
    sensitivity = (high - low) / data.size
    mean = float(np.clip(data, low, high).mean())
    out: NDArray[np.float64] = mean + rng.laplace(0.0, sensitivity / epsilon, size=n)
    return out


# -- Gaussian releases whose guarantee is a curve ------------------------------------------------


@functools.cache
def _opendp_gaussian_mean_zcdp(rho: float, lower: float, upper: float, size: int) -> Any:
    """OpenDP: mean of sized bounded data, Gaussian noise; the scale found for rho-zCDP at d_in = 2."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    space = (
        dp.vector_domain(dp.atom_domain(bounds=(lower, upper), nan=False), size=size),
        dp.symmetric_distance(),
    )
    bounded_mean = space >> dp.t.then_mean()  # type: ignore[no-untyped-call]
    return dp.binary_search_chain(
        lambda scale: bounded_mean >> dp.m.then_gaussian(scale=scale), d_in=2, d_out=rho
    )


def opendp_gaussian_mean_zcdp(
    x: NDArray[Any],
    n: int,
    rng: np.random.Generator,
    rho: float = 0.5,
    dataset: str = "wine",
    name: str = "alcohol",
    lower: float = 10.0,
    upper: float = 15.0,
) -> NDArray[np.float64]:
    """OpenDP's Gaussian measurement on a bounded mean, as OpenDP states it: rho-zCDP.

    ``mean >> gaussian(scale)`` on a sized vector (one record replaced is a symmetric distance
    of 2); ``binary_search_chain`` sets the scale so that the measurement's own privacy map
    gives ``rho`` at ``d_in = 2``. The claim tested is that map's value, with no conversion.
    """
    data = data_set(x, dataset, name)
    measurement = _opendp_gaussian_mean_zcdp(float(rho), float(lower), float(upper), int(data.size))
    return _releases(lambda: measurement(data), n)


def opendp_stated_rho(rho: float = 0.5, size: int = 178) -> float:
    """The rho OpenDP's privacy map states for the zCDP mean at one record replaced."""
    return float(_opendp_gaussian_mean_zcdp(float(rho), 10.0, 15.0, int(size)).map(2))


def pydp_gaussian_count(
    x: NDArray[Any],
    n: int,
    rng: np.random.Generator,
    epsilon: float = 1.0,
    delta: float = GAUSSIAN_DELTA,
    dataset: str = "digits",
    name: str = "target",
) -> NDArray[np.float64]:
    """python-dp's ``GaussianMechanism`` on a count of records (L2 sensitivity 1, one record added).

    The library calibrates its standard deviation for ``(epsilon, delta)``
    (:func:`pydp_gaussian_std`); a Gaussian with that deviation has the whole privacy profile of
    ``(1 / std)``-GDP, which is what the study tests.
    """
    from pydp.algorithms.numerical_mechanisms import GaussianMechanism  # type: ignore[import-untyped]

    count = float(data_set(x, dataset, name).size)
    mechanism = GaussianMechanism(epsilon=float(epsilon), delta=float(delta), sensitivity=1.0)
    return _releases(lambda: mechanism.add_noise(count), n)


def pydp_gaussian_std(epsilon: float = 1.0, delta: float = GAUSSIAN_DELTA) -> float:
    """The standard deviation python-dp's ``GaussianMechanism`` states for (epsilon, delta), sensitivity 1."""
    from pydp.algorithms.numerical_mechanisms import GaussianMechanism

    return float(GaussianMechanism(epsilon=float(epsilon), delta=float(delta), sensitivity=1.0).std)


def gaussian_profile(mu: float) -> Callable[[float], float]:
    """The privacy profile of mu-GDP, ``epsilon -> delta`` (what a Gaussian of that scale is)."""
    from certify.stats.tradeoff import gdp_delta

    def delta_of_epsilon(epsilon: float) -> float:
        return float(gdp_delta(epsilon, mu))

    return delta_of_epsilon


GRID: Final = 2.0**-40
"""The grid the planted releases compute on: values and noise multiples of 2^-40."""


def on_grid(values: NDArray[np.float64] | float) -> NDArray[np.float64]:
    """Values rounded to multiples of :data:`GRID` (exact in doubles of magnitude below 2^13).

    A release computed as ``on_grid(value) + on_grid(noise)`` is exact: its outputs are grid
    points whose law is a discretized Gaussian, the same under both inputs up to the shift, so
    the bits of the doubles say nothing the values do not. Computed in doubles directly,
    ``value + noise`` keeps low bits of ``value`` (and rounds differently near each input):
    certify's families on the representation of doubles refute that release whatever its
    noise (docs/bugs.md). These studies test the curve, not the arithmetic.
    """
    out: NDArray[np.float64] = np.round(np.asarray(values, dtype=np.float64) / GRID) * GRID
    return out


# -- one DP-SGD step -----------------------------------------------------------------------------

DPSGD_BATCH: Final = 64
"""Records in the DP-SGD batch: the first 64 of breast_cancer."""


@functools.cache
def dpsgd_batch() -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Standardized breast_cancer features (with a bias column) and labels of the batch's records."""
    from sklearn import datasets

    bunch = datasets.load_breast_cancer()
    X = np.asarray(bunch.data, dtype=np.float64)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    X = np.hstack([X, np.ones((X.shape[0], 1))])[:DPSGD_BATCH]
    y = np.asarray(bunch.target, dtype=np.float64)[:DPSGD_BATCH]
    X.setflags(write=False)
    y.setflags(write=False)
    return X, y


def _clipped_gradients(clip: float) -> NDArray[np.float64]:
    """Per-example logistic-loss gradients at the zero model, each clipped to norm ``clip``."""
    X, y = dpsgd_batch()
    grads = (0.5 - y)[:, None] * X  # d/dw of log(1 + e^{-y' w.x}) at w = 0, labels in {0, 1}
    norms = np.linalg.norm(grads, axis=1, keepdims=True)
    out: NDArray[np.float64] = grads * np.minimum(1.0, clip / norms)
    return out


def remove_one() -> list[float]:
    """The input denoting the batch without the record whose unclipped gradient is largest."""
    X, y = dpsgd_batch()
    grads = (0.5 - y)[:, None] * X
    return [float(np.argmax(np.linalg.norm(grads, axis=1)))]


def dpsgd_step(
    x: NDArray[Any],
    n: int,
    rng: np.random.Generator,
    noise_multiplier: float = 1.0,
    clip: float = 1.0,
) -> NDArray[np.float64]:
    """One DP-SGD step's noisy gradient sum: per-example clipping to ``clip``, sum, Gaussian noise.

    ``x = [-1]`` is the whole batch, ``x = [i]`` the batch without record ``i`` (one record
    added or removed, the relation DP-SGD accountants count). Each call returns the
    31-coordinate release ``sum_i clip(g_i) + N(0, (noise_multiplier * clip)^2 I)`` at the zero
    model: what Opacus' ``DPOptimizer`` adds to the parameters' gradient before its step (the
    model update is this vector times ``-lr / batch``, a post-processing). The noise is drawn
    from certify's generator; the sum and the noise are added on the grid of :func:`on_grid`.
    """
    grads = _clipped_gradients(float(clip))
    i = int(x[0])
    if not -1 <= i < grads.shape[0] or i != x[0]:
        raise ValueError(f"x must be [-1] or [i] with 0 <= i < {grads.shape[0]}; got {x.tolist()!r}.")
    total = grads.sum(axis=0) - (grads[i] if i >= 0 else 0.0)
    noise = rng.normal(0.0, noise_multiplier * clip, size=(n, total.size))
    out: NDArray[np.float64] = on_grid(total)[None, :] + on_grid(noise)  # exact: see on_grid
    return out


def dpsgd_profile(noise_multiplier: float = 1.0) -> tuple[Callable[[float], float], str]:
    """The privacy profile stated for one full-batch step, and where it comes from.

    ``dp_accounting``'s ``PLDAccountant`` after one ``GaussianDpEvent(noise_multiplier)`` when
    ``dp_accounting`` is installed (the ``case-studies`` extra); otherwise the exact profile of
    one Gaussian step, ``(1 / noise_multiplier)``-GDP (Dong, Roth and Su, 2022), which the
    accountant approximates from above.
    """
    try:
        import dp_accounting
        from dp_accounting.pld import pld_privacy_accountant
    except ImportError:
        return (
            gaussian_profile(1.0 / noise_multiplier),
            f"exact profile of one Gaussian step, {1.0 / noise_multiplier:g}-GDP "
            "(dp_accounting not installed)",
        )
    accountant = pld_privacy_accountant.PLDAccountant()
    accountant.compose(dp_accounting.GaussianDpEvent(noise_multiplier))

    def delta_of_epsilon(epsilon: float) -> float:
        return float(accountant.get_delta(epsilon))

    return delta_of_epsilon, f"dp_accounting PLDAccountant, GaussianDpEvent({noise_multiplier:g})"


# -- a planted bug: too little Gaussian noise ----------------------------------------------------


def planted_small_noise_mean(
    x: NDArray[Any],
    n: int,
    rng: np.random.Generator,
    mu: float = 1.0,
    shortfall: float = 0.8,
    dataset: str = "wine",
    name: str = "alcohol",
    lower: float = 10.0,
    upper: float = 15.0,
) -> NDArray[np.float64]:
    """A Gaussian mean with a bug: the noise is ``shortfall`` (0.8) times what ``mu``-GDP needs.

    It claims ``mu``-GDP (equivalently ``mu^2 / 2``-zCDP) for one record replaced in a sized
    data set in ``[lower, upper]``: the mean moves by at most ``(upper - lower) / size``, and
    the correct noise is that over ``mu``. A constant computed wrong (a variance used as a
    deviation, a sensitivity halved) leaves 20% too little noise: the release is truly
    ``mu / 0.8``-GDP. The mean and the noise are added on the grid of :func:`on_grid`, so
    that the bug is the noise and nothing else.
    """
    data = data_set(x, dataset, name).astype(np.float64)
    sensitivity = (upper - lower) / data.size
    sigma = shortfall * sensitivity / mu  # the bug: shortfall should be 1
    mean = float(np.clip(data, lower, upper).mean())
    out: NDArray[np.float64] = on_grid(mean) + on_grid(rng.normal(0.0, sigma, size=n))  # exact
    return out
