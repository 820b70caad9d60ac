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
    "opendp_gaussian_mean",
    "opendp_histogram",
    "opendp_laplace_sum",
    "original",
    "planted_mean_data_bounds",
    "pydp_bounded_mean",
    "pydp_bounded_sum",
    "pydp_count",
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
