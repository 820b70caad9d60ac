"""``K``-ary randomized response over prototypes (paper App. B)."""

from __future__ import annotations

import math
import numbers

import numpy as np
from numpy.typing import ArrayLike, NDArray

from certify.benchmark._mechanism_base import (
    RR_GRID_BITS,
    _as_generator,
    _Base,
    _check_epsilon_g,
    _check_n_samples,
)
from certify.benchmark.prototypes import PrototypeSet
from certify.errors import DataError, ParameterError

__all__ = ["RandomizedResponse"]


class RandomizedResponse(_Base):
    """``K``-ary randomized response over prototypes, with an integer keep threshold (App. B).

    Parameters
    ----------
    prototype_set : PrototypeSet
        The prototypes; labels are ``0 .. K - 1`` and must have distinct prototypes.
    epsilon_g : float
        Requested epsilon, finite and ``>= 0``.
    K : int or None, default None
        Number of labels, ``2 <= K <= n_identities``; ``None`` means all prototypes
        (``K = 400`` for the paper's sets).

    Raises
    ------
    ParameterError
        On invalid ``epsilon_g`` or ``K``.
    DataError
        If two of the first ``K`` prototypes coincide (outputs would not identify labels).

    Notes
    -----
    Given identity ``i`` the mechanism draws a uniform 53-bit integer ``u`` and releases ``c_i``
    if ``u < T``, else the prototype of a label drawn uniformly from the other ``K - 1``. The
    threshold ``T = round(p 2^53)`` represents the ideal probability
    ``p = e^epsilon / (e^epsilon + K - 1)`` exactly on the ``2^53`` grid, so the mechanism is
    pure DP with the *realized* epsilon ``|ln((T / 2^53) / ((1 - T / 2^53) / (K - 1)))|``, which
    :meth:`exact_epsilon` returns for every pair ``i != j`` (it differs from the request by
    rounding; it is ``inf`` when ``T = 2^53``, i.e. the requested epsilon is too large for the
    grid). ``delta = 0``.

    No continuous noise is added: outputs are exact copies of prototypes, so samples contain many
    exact ties (repeated rows) and a score is constant on each output value. Estimators that assume
    continuous data (density estimates, ROC curves without tie handling) must account for this.
    The oracle score is the discrete log-likelihood ratio: ``+epsilon`` when the output is
    ``c_j``, ``-epsilon`` when it is ``c_i``, 0 otherwise.

    Examples
    --------
    >>> from certify.benchmark.prototypes import dispersed
    >>> m = RandomizedResponse(dispersed(), 2.0)
    >>> round(m.epsilon_realized, 12), m.threshold < 2**53
    (2.0, True)
    """

    __slots__ = ("_eps", "_k", "_l", "_threshold")
    _eps: float
    _k: int
    _l: float
    _threshold: int

    def __init__(self, prototype_set: PrototypeSet, epsilon_g: float, K: int | None = None) -> None:
        super().__init__(prototype_set)
        self._eps = _check_epsilon_g(epsilon_g, allow_zero=True, family="randomized_response")
        n = self._ps.n_identities
        k = n if K is None else K
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 2 <= k <= n:
            raise ParameterError(f"K must be an integer in [2, {n}] (or None); got {K!r}.")
        self._k = int(k)
        sub = self._ps.l2_distances[: self._k, : self._k]
        if self._k > 1 and float(sub[np.triu_indices(self._k, 1)].min()) <= 0.0:
            raise DataError("prototypes must be distinct among the first K labels; got a repeated prototype.")
        self._threshold = _rr_threshold(self._eps, self._k)
        grid = 1 << RR_GRID_BITS
        t = self._threshold
        if t >= grid:
            self._l = math.inf
        else:
            self._l = math.log(t) + math.log(self._k - 1) - math.log(grid - t)

    @property
    def name(self) -> str:
        """``"randomized_response"``."""
        return "randomized_response"

    @property
    def epsilon_g(self) -> float:
        """Requested epsilon (see :attr:`epsilon_realized` for the exact one)."""
        return self._eps

    @property
    def epsilon_realized(self) -> float:
        """Realized pure-DP epsilon of the integer threshold."""
        return abs(self._l)

    @property
    def delta(self) -> float:
        """0.0: pure DP."""
        return 0.0

    @property
    def n_labels(self) -> int:
        """Number of labels ``K``."""
        return self._k

    @property
    def n_identities(self) -> int:
        """Valid identities are the ``K`` labels."""
        return self._k

    @property
    def threshold(self) -> int:
        """Integer keep threshold ``T`` on the ``2^53`` grid."""
        return self._threshold

    @property
    def keep_probability(self) -> float:
        """``T / 2^53``, the exact probability of releasing the true prototype."""
        return self._threshold / float(1 << RR_GRID_BITS)

    def sample_labels(
        self, identity: int, n_samples: int, rng: np.random.Generator | int
    ) -> NDArray[np.int64]:
        """Draw the released labels (not prototypes) for ``identity``; shape ``(n_samples,)``."""
        i = self._identity(identity)
        n = _check_n_samples(n_samples)
        gen = _as_generator(rng)
        u = gen.integers(0, 1 << RR_GRID_BITS, size=n, dtype=np.int64)
        other = gen.integers(0, self._k - 1, size=n, dtype=np.int64)
        other += other >= i
        labels: NDArray[np.int64] = np.where(u < self._threshold, np.int64(i), other)
        return labels

    def sample(self, identity: int, n_samples: int, rng: np.random.Generator | int) -> NDArray[np.float64]:
        """Draw ``n_samples`` released prototypes for ``identity``; shape ``(n_samples, d)``."""
        labels = self.sample_labels(identity, n_samples, rng)
        out: NDArray[np.float64] = self._ps.prototypes[labels]
        return out

    def exact_epsilon(self, i: int, j: int) -> float:
        """Realized epsilon for ``i != j`` (the same for every pair); 0 for ``i == j``."""
        a, c = self._pair(i, j)
        return 0.0 if a == c else self.epsilon_realized

    def log_likelihood_ratio(self, x: ArrayLike, i: int, j: int) -> NDArray[np.float64]:
        """Discrete LR: ``L`` if a row equals ``c_j``, ``-L`` if it equals ``c_i``, else 0."""
        a, c = self._pair(i, j)
        rows = self._rows(x)
        out = np.zeros(rows.shape[0], dtype=np.float64)
        if a == c:
            return out
        out[np.all(rows == self._ps.prototypes[c], axis=1)] = self._l
        out[np.all(rows == self._ps.prototypes[a], axis=1)] = -self._l
        return out

    def reference_auc(self, i: int, j: int) -> float:
        """Exact AUC of the discrete LR score, ties counting one half."""
        a, c = self._pair(i, j)
        if a == c or self._l == 0.0:
            return 0.5
        grid = float(1 << RR_GRID_BITS)
        p = self._threshold / grid
        q = (grid - self._threshold) / grid / (self._k - 1)
        rest = max(0.0, 1.0 - p - q)
        sgn = 1.0 if self._l > 0 else -1.0
        # Score values in increasing order: -|L|, 0, +|L|.
        neg = np.array([p, rest, q]) if sgn > 0 else np.array([q, rest, p])
        pos = neg[::-1]
        greater = sum(pos[u] * neg[:u].sum() for u in range(3))
        ties = float(np.dot(pos, neg))
        return float(greater + 0.5 * ties)


def _rr_threshold(epsilon: float, k: int) -> int:
    """``round(p 2^53)`` for ``p = e^eps / (e^eps + K - 1)``, via the complement when ``p > 1/2``."""
    grid = 1 << RR_GRID_BITS
    # q = 1 - p = (K - 1) e^-eps / (1 + (K - 1) e^-eps), accurate even when it is tiny.
    r = (k - 1) * math.exp(-epsilon)
    if r < 1.0:
        q = r / (1.0 + r)
        return grid - round(q * grid)
    p = 1.0 / (1.0 + r)
    return round(p * grid)
