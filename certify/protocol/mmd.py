"""The certified MMD route: a kernel fixed on development data, a lower confidence bound on reserved data.

Register an :class:`MMDTest` in a :class:`certify.Protocol` like a fixed decision rule; the sealed
protocol's evaluation turns a one-sided lower confidence bound on the population MMD into a
:class:`certify.Certificate` (``method = "mmd_reserved"``) that shares the family's error
budget (union bound over tests).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, final

import attrs
import numpy as np

from certify._core import Pair
from certify.data import EmbeddingTable
from certify.errors import DataError, ParameterError, RecordError
from certify.stats.mmd import median_bandwidth

if TYPE_CHECKING:  # typeguard skips these; attrs.Attribute is not subscriptable at run time
    from attrs import Attribute

__all__ = ["MMD_ASSUMPTIONS", "MMDTest"]

MMD_ASSUMPTIONS = (
    "the reserved rows of each identity are iid draws from that identity's output distribution, "
    "and the two identities' samples are independent",
    "the RBF kernel and its bandwidth were fixed on development data and recorded before evaluation",
    "one-sided bound on the population MMD by Gretton et al. (2012), Theorem 7 (kernel in [0, 1]), "
    "converted to epsilon by Eq. 14 (pure DP) and the hockey-stick bound (Sec. 4.3)",
    "the bound is simultaneous with the rest of the family by a union (Bonferroni) bound",
)


def _positive(instance: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: a positive finite bandwidth."""
    if not (isinstance(value, float) and math.isfinite(value) and value > 0):
        raise ParameterError(f"MMDTest.bandwidth must be a positive finite number; got {value!r}.")


@final
@attrs.frozen
class MMDTest:
    """An RBF kernel two-sample statistic with its bandwidth fixed on development data.

    Attributes
    ----------
    pair : Pair
        The identity pair.
    bandwidth : float
        The RBF bandwidth sigma, chosen on development rows only.
    development_fingerprint : str
        Fingerprint of the development table it was fixed on.
    name : str
        Label for reports (default ``"mmd"``).

    Notes
    -----
    On reserved rows the biased MMD statistic is computed with this kernel, and Gretton et al.
    (2012), Theorem 7 gives ``MMD >= MMD_b - 2 (sqrt(1/m) + sqrt(1/n)) - sqrt(2 (m + n)
    ln(1/alpha) / (m n))`` with probability ``1 - alpha``; the test spends its whole share of the
    family's budget on this one bound (``alpha = 1 - (1 - alpha_per_rate)^2``). The deduction is
    large: with 30 reserved rows per class in a family of 40 tests it exceeds sqrt(2), the largest
    possible MMD, so no certificate can be positive; with 300 rows it is about 0.5. The classifier
    route (Eq. 16) is usually far stronger; this route needs no classifier and no threshold.
    :func:`certify.plan.mmd_required_n` and :func:`certify.plan.mmd_ceiling` say when it can be
    positive.

    Examples
    --------
    >>> import numpy as np, certify as cf
    >>> rng = np.random.default_rng(0)
    >>> t = cf.EmbeddingTable.from_arrays(np.repeat(["a", "b"], 20), rng.normal(size=(40, 3)))
    >>> MMDTest.fit(t, cf.Pair("a", "b")).name
    'mmd'
    """

    pair: Pair = attrs.field(validator=attrs.validators.instance_of(Pair))
    bandwidth: float = attrs.field(converter=float, validator=_positive)
    development_fingerprint: str
    name: str = "mmd"

    @classmethod
    def fit(
        cls,
        development: EmbeddingTable,
        pair: Pair,
        *,
        bandwidth: float | None = None,
        name: str = "mmd",
    ) -> MMDTest:
        """Fix the kernel bandwidth on development rows of the pair (median heuristic by default).

        Raises
        ------
        DataError
            If ``development`` is not a table or the pair's identities are missing.
        """
        if not isinstance(development, EmbeddingTable):
            raise DataError("development must be an EmbeddingTable; pass split.development.")
        x_a, x_b = development.rows(pair.a), development.rows(pair.b)
        sigma = median_bandwidth(np.vstack([x_a, x_b])) if bandwidth is None else float(bandwidth)
        return cls(pair=pair, bandwidth=sigma, development_fingerprint=development.fingerprint, name=name)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready description for the pre-registration record."""
        return {
            "kind": "mmd",
            "name": self.name,
            "pair": [self.pair.a, self.pair.b],
            "bandwidth": self.bandwidth,
            "development_fingerprint": self.development_fingerprint,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MMDTest:
        """Rebuild from a record entry."""
        try:
            a, b = data["pair"]
            return cls(
                pair=Pair(str(a), str(b)),
                bandwidth=data["bandwidth"],
                development_fingerprint=str(data["development_fingerprint"]),
                name=str(data["name"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise RecordError(f"an MMD test entry of the record is malformed ({exc!r}).") from exc
