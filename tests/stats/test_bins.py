"""bin_index gives np.searchsorted's numbers, on the table's path and on the fallbacks."""

from __future__ import annotations

import numpy as np
import pytest

from certify.stats import _bins
from certify.stats._bins import bin_index


def _check(edges: np.ndarray, values: np.ndarray) -> None:
    """bin_index equals the binary search, value for value."""
    np.testing.assert_array_equal(bin_index(edges, values), np.searchsorted(edges, values, side="right"))


@pytest.mark.parametrize("bins", [2, 17, 300, 2000])
@pytest.mark.parametrize("law", ["laplace", "normal", "uniform"])
def test_quantile_edges_of_continuous_values(bins: int, law: str) -> None:
    """Quantile edges, as the binned fits cut them, of a contiguous and a strided column."""
    rng = np.random.default_rng(bins)
    values = getattr(rng, law)(size=200 * bins + 1000) * 7.0 + 3.0
    edges = np.unique(np.quantile(values, np.linspace(0, 1, bins + 2)[1:-1]))
    _check(edges, values)
    # a strided column, as binned scores read it
    table = np.column_stack([values, -values])
    _check(edges, table[:, 1])


def test_values_on_the_edges_and_one_ulp_either_side() -> None:
    """Values on an edge go to the bin above it; one ulp below, to the bin below."""
    rng = np.random.default_rng(1)
    edges = np.unique(rng.normal(size=500))
    values = np.concatenate([edges, np.nextafter(edges, np.inf), np.nextafter(edges, -np.inf)])
    values = np.concatenate([values, rng.normal(size=40_000), [edges[0] - 1e9, edges[-1] + 1e9]])
    _check(edges, values)


def test_atoms_with_an_edge_one_ulp_above_them() -> None:
    """An atom and the next float after it, both edges (as the histogram fits cut atoms), and -0.0."""
    rng = np.random.default_rng(2)
    atoms = np.array([-1.0, 0.0, 2.5])
    inner = np.quantile(rng.laplace(size=10_000), np.linspace(0, 1, 60)[1:-1])
    edges = np.unique(np.concatenate([inner, atoms, np.nextafter(atoms, np.inf)]))
    values = np.concatenate([rng.choice(atoms, 20_000), rng.laplace(size=20_000), [-0.0]])
    _check(edges, values)
    assert int(bin_index(edges, np.array([-0.0]))[0]) == int(np.searchsorted(edges, 0.0, side="right"))


def test_every_path_is_taken_and_agrees(monkeypatch: pytest.MonkeyPatch) -> None:
    """The table and each fallback to the binary search give the same numbers."""
    rng = np.random.default_rng(3)
    calls: list[str] = []
    real = _bins.np.searchsorted

    def counted(*args: object, **kwargs: object) -> object:
        calls.append("search")
        return real(*args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(_bins.np, "searchsorted", counted)
    laplace = np.unique(np.quantile(rng.laplace(size=50_000), np.linspace(0, 1, 200)[1:-1]))
    spread = np.logspace(0, 12, 100)  # edges of values spread over twelve orders of magnitude
    spread = np.concatenate([-spread[::-1], spread])
    cases = [
        (laplace, rng.laplace(size=50_000), 0),  # the table
        (laplace, rng.laplace(size=100), 1),  # too few values for the table
        (laplace, np.append(rng.laplace(size=50_000), np.nan), 1),  # NaN: placed last, as sorted
        (spread, rng.standard_cauchy(size=50_000) ** 3, 1),  # crowded cells near 0
        (np.array([-1e308, 1e308]), rng.normal(size=20_000), 1),  # the span overflows
    ]
    for edges, values, searched in cases:
        before = len(calls)
        monkeypatch.undo()
        expected = np.searchsorted(edges, values, side="right")
        monkeypatch.setattr(_bins.np, "searchsorted", counted)
        np.testing.assert_array_equal(bin_index(edges, values), expected)
        assert len(calls) - before == searched


def test_float32_and_integer_values_are_placed_as_float64() -> None:
    """Values of other dtypes are compared as the search compares them, in float64."""
    rng = np.random.default_rng(5)
    edges = np.unique(np.quantile(rng.laplace(size=20_000), np.linspace(0, 1, 300)[1:-1]))
    single = rng.laplace(size=60_000).astype(np.float32)
    _check(edges, single)
    # the first edge is no float32 number: the cells of float32 values computed in float32
    # would be shifted by about five cells
    edges = 1e6 + 0.03 + 0.05 * np.arange(200)
    _check(edges, (1e6 + rng.uniform(0, 10, size=60_000)).astype(np.float32))
    integers = rng.integers(-5, 6, size=60_000)  # every one on an edge
    _check(np.arange(-5.0, 6.0), integers)
