"""Fits of the families that read the floating-point representation of outputs.

The ``grain`` and ``mantissa`` families (:class:`~certify.protocol.float_scores.BitsScore`)
score each continuous output coordinate by the development log ratio of its representation
cell: sign, exponent and the trailing zero bits of the significand (``grain``), or sign,
exponent and the lowest mantissa bits (``mantissa``). They see bugs in the arithmetic of a
mechanism, not in its law: textbook Laplace or Gaussian noise added to the input on doubles
(Mironov 2012) leaves outputs on grids that depend on the input.

Cost is kept out of audits that cannot profit: integer outputs, coordinates with few distinct
values (the histogram family sees those exactly) and coordinates whose bits, within each
binade, are consistent with one law under both inputs (a homogeneity test at level
:data:`_SCREEN_P`, :func:`_differs`) get no score, so a mechanism whose arithmetic is exact pays
for two counting passes per coordinate and nothing else.
"""

from __future__ import annotations

from typing import Final

import numpy as np
from numpy.typing import NDArray

from certify.protocol.float_scores import BitsFeature, BitsScore, bits_cells

__all__ = ["FLOAT_FAMILIES", "float_fitted"]

FLOAT_FAMILIES: Final[tuple[BitsFeature, ...]] = ("grain", "mantissa")
"""The representation families, in the order ties are broken."""

_MAX_COORDINATES: Final = 64
_PROBE_ROWS: Final = 10_000
_MIN_DISTINCT: Final = 1_000
_SCREEN_P: Final = 1e-3
_SCREEN_MIN_COUNT: Final = 10


def _continuous(column: NDArray[np.float64]) -> bool:
    """Whether a coordinate holds non-integer values with many distinct ones (a probe of rows)."""
    probe = column[:_PROBE_ROWS]
    if bool(np.all(probe == np.round(probe))):
        return False
    return bool(np.unique(probe).size >= min(_MIN_DISTINCT, probe.size // 2))


def _differs(ca: NDArray[np.float64], cb: NDArray[np.float64]) -> bool:
    """Whether the bits within a binade are distributed differently under the two inputs.

    ``ca`` and ``cb`` count the cell codes; a code is a binade (sign and exponent) times 64
    plus the low feature. The law of the output's value differs between the inputs of any
    useful mechanism, and with it the share of each binade, so the binades' own counts are
    conditioned on: within each binade counted at least :data:`_SCREEN_MIN_COUNT` times under
    each input, a chi-square homogeneity test of the feature (cells counted fewer than 5 times
    pooled), summed over binades, at level :data:`_SCREEN_P`. A mechanism whose arithmetic is
    exact gives the same bits within a binade under both inputs and pays for nothing more.
    """
    from scipy.stats import chi2

    a, b = ca.reshape(-1, 64), cb.reshape(-1, 64)
    ra, rb = a.sum(axis=1), b.sum(axis=1)
    rows = (ra >= _SCREEN_MIN_COUNT) & (rb >= _SCREEN_MIN_COUNT)
    if not rows.any():
        return False
    a, b, ra, rb = a[rows], b[rows], ra[rows], rb[rows]
    total = a + b
    big = total >= 5
    # the small cells of each binade pooled into one more cell
    a = np.column_stack([np.where(big, a, 0.0), np.where(big, 0.0, a).sum(axis=1)])
    b = np.column_stack([np.where(big, b, 0.0), np.where(big, 0.0, b).sum(axis=1)])
    total = a + b
    share = (ra / (ra + rb))[:, None]
    used = total > 0
    ea, eb = total * share, total * (1.0 - share)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(used, (a - ea) ** 2 / ea + (b - eb) ** 2 / eb, 0.0)
    dof = int((used.sum(axis=1) - 1).clip(min=0).sum())
    if dof < 1:
        return False
    return bool(float(chi2.sf(float(terms.sum()), dof)) < _SCREEN_P)


def float_fitted(
    family: BitsFeature, fit_a: NDArray[np.float64], fit_b: NDArray[np.float64]
) -> list[tuple[BitsScore, str]]:
    """One representation score per continuous coordinate whose cells differ between the inputs.

    Each cell's score is the smoothed development log ratio ``log p_b / p_a`` (half a count
    added to each side), fitted on ``fit_a`` and ``fit_b`` (the first half of the development
    calls); cells never seen score 0.
    """
    from certify.blackbox._fits import _log_ratio

    width = fit_a.shape[1]
    out: list[tuple[BitsScore, str]] = []
    for j in range(min(width, _MAX_COORDINATES)):
        if not (_continuous(fit_a[:, j]) and _continuous(fit_b[:, j])):
            continue
        code_a, code_b = bits_cells(fit_a[:, j], family), bits_cells(fit_b[:, j], family)
        size = (int(max(code_a.max(), code_b.max())) // 64 + 1) * 64  # whole binades
        ca = np.bincount(code_a, minlength=size).astype(np.float64)
        cb = np.bincount(code_b, minlength=size).astype(np.float64)
        if not _differs(ca, cb):
            continue
        cells = np.flatnonzero((ca + cb) > 0)
        scores = _log_ratio(cb[cells], fit_b.shape[0], ca[cells], fit_a.shape[0])
        model = BitsScore(j, family, cells.tolist(), scores.tolist(), 0.0, width)
        out.append((model, f"{family}[{j}] ({cells.size} cells)"))
    return out
