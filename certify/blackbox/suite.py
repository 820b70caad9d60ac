"""The standard mechanisms of the DP-testing literature, as vectorized black boxes.

``SUITE`` maps twenty mechanism names to :class:`SuiteMechanism` objects. Each one is called as
``mech(x, n, rng)`` and returns ``n`` independent outputs on the input ``x``; each also records
its claimed epsilon, the exact privacy loss where it is known (with the derivation), the input
pairs the published tools tested, and the lower bounds those tools published. The mechanisms, their
parameters and the input domains are those of the DP-Sniper evaluation [1]_ (``exp_default.py`` of
its artifact), so that the published numbers apply to exactly these mechanisms.

=========================== ======== ====================================================
name                        claimed  pseudocode and parameters
=========================== ======== ====================================================
LaplaceMechanism            0.1      Laplace mechanism [5]_, scale ``1 / 0.1``
TruncatedGeometricMechanism 0.1      GeoSample, Balcer and Vadhan [6]_ Alg. 4.8, counts 0..5
NoisyHist1, NoisyHist2      0.1      Ding et al. [2]_ Alg. 9 and 10 (5 bins)
ReportNoisyMax1..4          0.1      Ding et al. [2]_ Alg. 5, 6, 7, 8 (5 queries)
SparseVectorTechnique1..6   0.1      Lyu, Su and Li [3]_ Alg. 1-6 (10 queries)
Rappor, OneTimeRappor       0.4, 0.8 Erlingsson, Pihur and Korolova [7]_ steps 1-3, 1-2
LaplaceParallel             0.1      20 Laplace mechanisms at ``epsilon = 0.005`` each
SVT34Parallel               0.2      [3]_ Alg. 3 and Alg. 4 side by side (``c = 2``)
PrefixSum, NumericalSVT     0.1      Wang, Ding, Wang, Kifer and Zhang [4]_
=========================== ======== ====================================================

Inputs. ``x`` is a 1-D numpy array of real numbers of the mechanism's input length (1, 5 or 10):
the query answers (or the count, or the client's value for RAPPOR). Two inputs are neighbours when

* one-entry mechanisms (Laplace, TruncatedGeometric, NoisyHist1/2, LaplaceParallel): they differ
  in at most one entry, by at most 1 (a histogram bin or count changes by one record);
* many-query mechanisms (ReportNoisyMax1-4, the SVT variants, SVT34Parallel, PrefixSum,
  NumericalSVT): every entry differs by at most 1 (sensitivity-1 queries, the "all differ"
  relation both DP-Sniper and StatDP test);
* Rappor, OneTimeRappor (local DP): any two integer values.

Outputs. ``mech(x, n, rng)`` has shape ``(n,)`` when ``output_dim == 1`` and ``(n, output_dim)``
otherwise; discrete outputs are int64, continuous and mixed ones float64. Sparse-vector answers
are coded ``1`` (above the noisy threshold), ``0`` (below) and ``-1`` (not answered because the
algorithm stopped after ``c`` answers above). Variants that release noisy values (SVT3, the SVT3
half of SVT34Parallel, NumericalSVT) return two columns per query so that no sentinel can collide
with a released value: the first block of columns holds the flags (as floats), the second block
the released value where the flag is 1 and ``0.0`` elsewhere. RAPPOR outputs the 20 reported
bits as int64 0/1.

=========================== ========== ========= ============================================
name                        shape      dtype     values
=========================== ========== ========= ============================================
LaplaceMechanism            (n,)       float64   x + Lap(10)
TruncatedGeometricMechanism (n,)       int64     count in 0..5
NoisyHist1, NoisyHist2      (n, 5)     float64   noisy bins
ReportNoisyMax1, 2          (n,)       int64     index 0..4 of the noisy maximum
ReportNoisyMax3, 4          (n,)       float64   the noisy maximum
SparseVectorTechnique1, 2   (n, 10)    int64     1 above, 0 below, -1 stopped (c = 1)
SparseVectorTechnique3      (n, 20)    float64   10 flags (1, 0, -1), 10 released values
SparseVectorTechnique4      (n, 10)    int64     1 above, 0 below, -1 stopped (c = 1)
SparseVectorTechnique5, 6   (n, 10)    int64     1 above, 0 below (no cutoff)
Rappor, OneTimeRappor       (n, 20)    int64     reported bits 0/1
LaplaceParallel             (n, 20)    float64   20 releases x + Lap(200)
SVT34Parallel               (n, 30)    float64   Alg. 3 flags, Alg. 3 values, Alg. 4 flags
PrefixSum                   (n, 10)    float64   running sums of x_j + Lap(10)
NumericalSVT                (n, 20)    float64   10 flags (1, 0, -1), 10 released values
=========================== ========== ========= ============================================

Published bounds. For every mechanism the suite records DP-Sniper's lower confidence bounds with
its logistic-regression and neural-network classifiers and StatDP's bounds as run by DP-Sniper's
wrapper (two runs), from the artifact's ``eval_sp2021/reference-results/*.log`` files. All are
Clopper-Pearson bounds at confidence level 0.9 (two one-sided 0.95 bounds joined by a union
bound; ``dpsniper/search/ddconfig.py``, ``confidence=0.9``;
``dpsniper/probability/estimators.py``, ``EpsEstimator._compute_lcb``) computed from
``n_final = 2e8`` fresh calls on each input of the final pair. A 0.9 lower bound may exceed the
truth with probability up to 0.1: StatDP's second bound for NoisyHist2 (10.002) does exceed the
exact 10.

Randomness. Only the ``rng`` argument is used. Laplace noise of scale ``b`` is drawn as ``b``
times the difference of two standard exponentials (an exact representation of the Laplace law).

References
----------
.. [1] B. Bichsel, S. Steffen, I. Bogunovic and M. Vechev, "DP-Sniper: Black-Box Discovery of
   Differential Privacy Violations using Classifiers", IEEE S&P 2021.
.. [2] Z. Ding, Y. Wang, G. Wang, D. Zhang and D. Kifer, "Detecting Violations of Differential
   Privacy", ACM CCS 2018.
.. [3] M. Lyu, D. Su and N. Li, "Understanding the Sparse Vector Technique for Differential
   Privacy", PVLDB 10(6), 2017.
.. [4] Y. Wang, Z. Ding, G. Wang, D. Kifer and D. Zhang, "Proving Differential Privacy with
   Shadow Execution", PLDI 2019.
.. [5] C. Dwork, F. McSherry, K. Nissim and A. Smith, "Calibrating Noise to Sensitivity in
   Private Data Analysis", TCC 2006.
.. [6] V. Balcer and S. Vadhan, "Differential Privacy on Finite Computers", ITCS 2018,
   arXiv:1709.05396.
.. [7] U. Erlingsson, V. Pihur and A. Korolova, "RAPPOR: Randomized Aggregatable
   Privacy-Preserving Ordinal Response", ACM CCS 2014.

Examples
--------
>>> import numpy as np
>>> from certify.blackbox.suite import SUITE
>>> mech = SUITE["ReportNoisyMax1"]
>>> out = mech(np.array([1.0, 1.0, 1.0, 1.0, 1.0]), 4, np.random.default_rng(0))
>>> out.shape, out.dtype.name
((4,), 'int64')
>>> best = mech.best_published()
>>> best.tool, round(best.epsilon_lower, 4), best.confidence_level
('DP-Sniper (MLP)', 0.0925, 0.9)
"""

from __future__ import annotations

import math
import numbers
import types
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, final

import attrs
import numpy as np
from numpy.typing import NDArray

from certify.errors import ParameterError

if TYPE_CHECKING:  # typeguard skips these; attrs.Attribute is not subscriptable at run time
    from attrs import Attribute

__all__ = ["SUITE", "PublishedBound", "SuiteMechanism"]

OutputKind: TypeAlias = Literal["discrete", "continuous", "mixed"]
_Output: TypeAlias = NDArray[np.int64] | NDArray[np.float64]
_Sampler: TypeAlias = Callable[[NDArray[np.float64], int, np.random.Generator], _Output]
_Pair: TypeAlias = tuple[tuple[float, ...], tuple[float, ...]]

# ---------------------------------------------------------------------------------------------
# Parameters (DP-Sniper's exp_default.py and the mechanisms' defaults)

_EPSILON: Final = 0.1
_LAPLACE_SCALE: Final = 1.0 / _EPSILON
_HIST_BINS: Final = 5
_RNM_QUERIES: Final = 5
_RNM_SCALE: Final = 2.0 / _EPSILON
_SVT_QUERIES: Final = 10
_TG_N: Final = 5
_TG_K: Final = math.ceil(math.log(2.0 / _EPSILON))
"""DP-Sniper's k = ceil(ln(2 / eps)) with the natural logarithm: 3 at eps = 0.1."""
_RAPPOR_HASHES: Final = 4
_RAPPOR_BITS: Final = 20
_RAPPOR_F: Final = 0.75
_RAPPOR_P: Final = 0.45
_RAPPOR_Q: Final = 0.55
_OTR_F: Final = 0.95
_PARALLEL_COPIES: Final = 20
_PARALLEL_EPSILON: Final = 0.005

# ---------------------------------------------------------------------------------------------
# Validation


def _fail(name: str, constraint: str, value: object, fix: str = "") -> ParameterError:
    """A ParameterError in the house format."""
    return ParameterError(f"{name} must be {constraint}; got {value!r}.{(' ' + fix) if fix else ''}")


def _nonempty_str(_: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: a non-empty string."""
    if not isinstance(value, str) or not value:
        raise _fail(attribute.name, "a non-empty string", value)


def _float_vector(name: str, value: object) -> None:
    """Check a non-empty tuple of finite Python floats."""
    ok = (
        isinstance(value, tuple)
        and len(value) > 0
        and all(isinstance(v, float) and math.isfinite(v) for v in value)
    )
    if not ok:
        raise _fail(name, "a non-empty tuple of finite floats", value)


def _check_bound_inputs(_: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: an input vector of a published bound."""
    _float_vector(attribute.name, value)


def _check_epsilon_lower(_: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: a lower bound in [0, inf]."""
    if not isinstance(value, float) or math.isnan(value) or value < 0.0:
        raise _fail(attribute.name, "a float >= 0", value)


def _check_confidence(_: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: a confidence level in (0, 1)."""
    if not isinstance(value, float) or not 0.0 < value < 1.0:
        raise _fail(attribute.name, "a float in (0, 1)", value)


def _check_calls(_: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: None or a positive integer."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise _fail(attribute.name, "None or an integer >= 1", value)


@final
@attrs.frozen
class PublishedBound:
    """A lower bound on a mechanism's privacy loss as published by a testing tool.

    Attributes
    ----------
    tool : str
        The tool and its variant, e.g. ``"DP-Sniper (logistic)"``, ``"DP-Sniper (MLP)"``,
        ``"StatDP"``.
    epsilon_lower : float
        The lower confidence bound the tool reports.
    confidence_level : float
        The confidence level of ``epsilon_lower``.
    calls : int or None
        Mechanism calls the tool used in total (search and final estimate), if known.
    input_a, input_b : tuple of float
        The input pair of the bound, in the order the tool logged it.
    reference : str
        Where the number comes from (paper, artifact file, log entry).

    Notes
    -----
    A bound at confidence level ``1 - alpha`` is below the true privacy loss with probability at
    least ``1 - alpha`` over the tool's own sampling; across many published bounds a fraction of
    about ``alpha`` may exceed the truth.
    """

    tool: str = attrs.field(validator=_nonempty_str)
    epsilon_lower: float = attrs.field(validator=_check_epsilon_lower)
    confidence_level: float = attrs.field(validator=_check_confidence)
    calls: int | None = attrs.field(validator=_check_calls)
    input_a: tuple[float, ...] = attrs.field(validator=_check_bound_inputs)
    input_b: tuple[float, ...] = attrs.field(validator=_check_bound_inputs)
    reference: str = attrs.field(validator=_nonempty_str)

    def __attrs_post_init__(self) -> None:
        if len(self.input_a) != len(self.input_b):
            raise _fail(
                "input_b", f"of the same length as input_a ({len(self.input_a)})", self.input_b
            )


def _check_claimed(_: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: a finite positive float."""
    if not isinstance(value, float) or not math.isfinite(value) or value <= 0.0:
        raise _fail(attribute.name, "a finite float > 0", value)


def _check_true_epsilon(_: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: None or a float in [0, inf]."""
    if value is not None and (not isinstance(value, float) or math.isnan(value) or value < 0.0):
        raise _fail(attribute.name, "None or a float in [0, inf]", value)


def _check_bool(_: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: a bool."""
    if not isinstance(value, bool):
        raise _fail(attribute.name, "a bool", value)


def _check_pairs(_: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: a non-empty tuple of input pairs."""
    if not isinstance(value, tuple) or not value:
        raise _fail(attribute.name, "a non-empty tuple of (input_a, input_b) pairs", value)
    for pair in value:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise _fail(attribute.name, "a tuple of (input_a, input_b) pairs", value)
        _float_vector(attribute.name, pair[0])
        _float_vector(attribute.name, pair[1])


def _check_published(_: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: a tuple of PublishedBound."""
    if not isinstance(value, tuple) or not all(isinstance(b, PublishedBound) for b in value):
        raise _fail(attribute.name, "a tuple of PublishedBound", value)


def _check_output_kind(_: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: one of the three output kinds."""
    if value not in ("discrete", "continuous", "mixed"):
        raise _fail(attribute.name, "'discrete', 'continuous' or 'mixed'", value)


def _check_positive_int(_: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: an integer >= 1."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _fail(attribute.name, "an integer >= 1", value)


def _check_callable(_: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: a callable."""
    if not callable(value):
        raise _fail(attribute.name, "callable", value)


def _check_input_kind(_: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: 'real' or 'integer'."""
    if value not in ("real", "integer"):
        raise _fail(attribute.name, "'real' or 'integer'", value)


def _check_range(_: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: a (low, high) pair of floats with low <= high."""
    ok = (
        isinstance(value, tuple)
        and len(value) == 2
        and all(isinstance(v, float) for v in value)
        and value[0] <= value[1]
    )
    if not ok:
        raise _fail(attribute.name, "a (low, high) tuple of floats with low <= high", value)


@final
@attrs.frozen
class SuiteMechanism:
    """One mechanism of the suite: a vectorized black box with its claim and known results.

    Attributes
    ----------
    name : str
        The name used in the DP-testing literature (the key in ``SUITE``).
    claimed_epsilon : float
        The epsilon the mechanism is claimed to satisfy.
    input_pairs : tuple of (tuple of float, tuple of float)
        Neighbouring input pairs the published tools tested: the pair of the best published
        bound first, then the other published pairs, then StatDP's standard patterns not yet
        listed (deduplicated, order within a pair ignored).
    violates_claim : bool
        Whether the mechanism is known to violate its claim.
    true_epsilon : float or None
        The exact privacy loss, the supremum over neighbouring inputs and output events (may be
        ``math.inf``); ``None`` when unknown.
    true_epsilon_note : str
        How ``true_epsilon`` is known (theorem, derivation) or why it is unknown.
    source : str
        The paper whose pseudocode the mechanism implements.
    published : tuple of PublishedBound
        Every published lower bound recorded for this mechanism.
    output_kind : {"discrete", "continuous", "mixed"}
        The kind of output.
    output_dim : int
        ``k`` for outputs of shape ``(n, k)``; 1 for outputs of shape ``(n,)``.

    Notes
    -----
    ``violates_claim`` agrees with ``true_epsilon > claimed_epsilon`` whenever ``true_epsilon`` is
    known; construction refuses an entry where it does not. The output encoding, input length and
    neighbour relation of each mechanism are described in the module docstring.
    """

    name: str = attrs.field(validator=_nonempty_str)
    claimed_epsilon: float = attrs.field(validator=_check_claimed)
    input_pairs: tuple[_Pair, ...] = attrs.field(validator=_check_pairs)
    violates_claim: bool = attrs.field(validator=_check_bool)
    true_epsilon: float | None = attrs.field(validator=_check_true_epsilon)
    true_epsilon_note: str = attrs.field(validator=_nonempty_str)
    source: str = attrs.field(validator=_nonempty_str)
    published: tuple[PublishedBound, ...] = attrs.field(validator=_check_published)
    output_kind: OutputKind = attrs.field(validator=_check_output_kind)
    output_dim: int = attrs.field(validator=_check_positive_int)
    _sampler: _Sampler = attrs.field(validator=_check_callable, repr=False)
    _input_length: int = attrs.field(validator=_check_positive_int, repr=False)
    _input_kind: Literal["real", "integer"] = attrs.field(validator=_check_input_kind, repr=False)
    _input_range: tuple[float, float] = attrs.field(validator=_check_range, repr=False)

    def __attrs_post_init__(self) -> None:
        known = self.true_epsilon
        if known is not None and self.violates_claim != (known > self.claimed_epsilon):
            raise _fail(
                "violates_claim",
                f"true_epsilon > claimed_epsilon ({self.true_epsilon!r} > {self.claimed_epsilon!r})",
                self.violates_claim,
            )
        for a, b in self.input_pairs:
            if len(a) != self._input_length or len(b) != self._input_length:
                raise _fail("input_pairs", f"pairs of inputs of length {self._input_length}", (a, b))

    def __call__(self, x: NDArray[Any], n: int, rng: np.random.Generator) -> _Output:
        """Draw ``n`` independent outputs of the mechanism on input ``x``.

        Parameters
        ----------
        x : numpy.ndarray
            1-D array of real numbers (integer or float dtype) of the mechanism's input length;
            integer-valued where the mechanism needs integers (TruncatedGeometricMechanism:
            a count in 0..5; Rappor, OneTimeRappor: the client's value).
        n : int
            Number of calls, ``n >= 1``.
        rng : numpy.random.Generator
            The only source of randomness.

        Returns
        -------
        numpy.ndarray
            Shape ``(n,)`` if ``output_dim == 1``, else ``(n, output_dim)``; int64 for discrete
            outputs, float64 otherwise.

        Raises
        ------
        ParameterError
            If ``x`` is not a 1-D real array of the right length and values, ``n`` is not an
            integer ``>= 1`` or ``rng`` is not a numpy Generator.

        Notes
        -----
        Calls are independent: the outputs are ``n`` iid draws from the mechanism's output law
        on ``x``. Draws are vectorized over calls; memory is the output plus a few length-``n``
        vectors.

        Examples
        --------
        >>> import numpy as np
        >>> svt = SUITE["SparseVectorTechnique1"]
        >>> out = svt(np.zeros(10), 3, np.random.default_rng(1))
        >>> out.shape, set(out.ravel().tolist()) <= {-1, 0, 1}
        ((3, 10), True)
        """
        values = self._check_x(x)
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
            raise _fail("n", "an integer >= 1", n, "Pass the number of mechanism calls, e.g. n=100_000.")
        if not isinstance(rng, np.random.Generator):
            raise _fail("rng", "a numpy.random.Generator", rng, "Pass numpy.random.default_rng(seed).")
        return self._sampler(values, int(n), rng)

    @property
    def suite_name(self) -> str:
        """The name under which audits count this mechanism's evaluations (``suite:NAME``)."""
        return self.name

    def best_published(self) -> PublishedBound | None:
        """The published bound with the highest ``epsilon_lower`` (the first on ties); None if none.

        Returns
        -------
        PublishedBound or None
            The strongest published lower bound.

        Examples
        --------
        >>> best = SUITE["NoisyHist2"].best_published()
        >>> best.tool, round(best.epsilon_lower, 3), SUITE["NoisyHist2"].true_epsilon
        ('StatDP', 10.002, 10.0)
        """
        return max(self.published, key=lambda b: b.epsilon_lower, default=None)

    def _check_x(self, x: object) -> NDArray[np.float64]:
        """Validate an input and return it as a float64 vector."""
        length = self._input_length
        if not isinstance(x, np.ndarray):
            raise _fail(
                "x", f"a 1-D numpy array with {length} entries for {self.name}", type(x).__name__,
                f"Pass numpy.asarray(x, dtype=float) with {length} entries.",
            )
        if x.ndim != 1 or x.shape[0] != length:
            raise _fail(
                "x", f"a 1-D array of length {length} for {self.name}", f"array of shape {x.shape}",
                f"Pass {length} query answers as a 1-D array.",
            )
        if x.dtype.kind not in "iuf":
            raise _fail(
                "x", "an array of integer or float dtype", f"dtype {x.dtype}",
                "Convert with numpy.asarray(x, dtype=float).",
            )
        values = x.astype(np.float64)
        if not np.all(np.isfinite(values)):
            raise _fail("x", "finite", x)
        if self._input_kind == "integer" and not np.all(values == np.round(values)):
            raise _fail("x", f"integer-valued for {self.name}", x, "Round the input to integers.")
        low, high = self._input_range
        if np.any(values < low) or np.any(values > high):
            raise _fail("x", f"in [{low:g}, {high:g}] for {self.name}", x)
        return values


# ---------------------------------------------------------------------------------------------
# Noise


def _laplace(rng: np.random.Generator, scale: float, size: int) -> NDArray[np.float64]:
    """``size`` iid Laplace(0, scale) draws, as the difference of two standard exponentials."""
    draws = rng.standard_exponential(size)
    draws -= rng.standard_exponential(size)
    draws *= scale
    return draws


def _noise(
    rng: np.random.Generator, law: Literal["laplace", "exponential"], scale: float, size: int
) -> NDArray[np.float64]:
    """``size`` iid draws of Laplace(0, scale) or Exponential(scale) noise."""
    if law == "laplace":
        return _laplace(rng, scale, size)
    draws = rng.standard_exponential(size)
    draws *= scale
    return draws


def _noisy_columns(
    values: NDArray[np.float64], n: int, rng: np.random.Generator, scale: float
) -> NDArray[np.float64]:
    """Rows ``values + Lap(scale)`` with independent noise, filled one column at a time."""
    out = np.empty((n, values.size))
    for j, value in enumerate(values):
        column = _laplace(rng, scale, n)
        column += value
        out[:, j] = column
    return out


# ---------------------------------------------------------------------------------------------
# Samplers, one per mechanism


def _sample_laplace(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Laplace mechanism: ``x[0] + Lap(1 / 0.1)``; output shape ``(n,)``, float64."""
    out = _laplace(rng, _LAPLACE_SCALE, n)
    out += x[0]
    return out


def _geometric_cdf_table(count: int) -> NDArray[np.int64]:
    """F(0..n) of Balcer and Vadhan's GeoSample, Step 2, as exact integers over d."""
    k, m = _TG_K, _TG_N
    base = 2**k + 1
    d = (2 ** (k + 1) + 1) * base ** (m - 1)
    table = [2 ** (k * (count - z)) * base ** (m - (count - z)) for z in range(count)]
    table += [d - 2 ** (k * (z - count + 1)) * base ** (m - 1 - (z - count)) for z in range(count, m)]
    table.append(d)
    return np.array(table, dtype=np.int64)


_TG_TABLES: Final = tuple(_geometric_cdf_table(c) for c in range(_TG_N + 1))
_TG_DENOMINATOR: Final = int(_TG_TABLES[0][-1])


def _sample_truncated_geometric(
    x: NDArray[np.float64], n: int, rng: np.random.Generator
) -> NDArray[np.int64]:
    """GeoSample: the smallest z in 0..5 with F(z) >= U, U uniform on 1..d; shape ``(n,)``, int64.

    ``k = ceil(ln(2 / 0.1)) = 3`` and ``d = (2^(k+1) + 1)(2^k + 1)^4``; all arithmetic is exact.
    """
    table = _TG_TABLES[int(x[0])]
    u = rng.integers(1, _TG_DENOMINATOR, size=n, endpoint=True)
    return np.searchsorted(table, u, side="left").astype(np.int64, copy=False)


def _sample_noisy_hist1(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Noisy histogram: each bin plus Lap(1 / 0.1); shape ``(n, 5)``, float64."""
    return _noisy_columns(x, n, rng, 1.0 / _EPSILON)


def _sample_noisy_hist2(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Noisy histogram with scale ``eps`` instead of ``1 / eps``: each bin plus Lap(0.1); ``(n, 5)``."""
    return _noisy_columns(x, n, rng, _EPSILON)


def _noisy_max(
    x: NDArray[np.float64],
    n: int,
    rng: np.random.Generator,
    *,
    law: Literal["laplace", "exponential"],
    report: Literal["index", "value"],
) -> NDArray[np.int64] | NDArray[np.float64]:
    """Index or value of the largest ``x[j] + noise_j`` (noise of scale 2 / 0.1), by a running max."""
    best = _noise(rng, law, _RNM_SCALE, n)
    best += x[0]
    index = np.zeros(n, dtype=np.int64)
    for j in range(1, x.size):
        candidate = _noise(rng, law, _RNM_SCALE, n)
        candidate += x[j]
        if report == "index":
            index[candidate > best] = j
        np.maximum(best, candidate, out=best)
    return index if report == "index" else best


def _sample_rnm1(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Report noisy max, Laplace noise Lap(2 / 0.1): the argmax index in 0..4; ``(n,)``, int64."""
    return _noisy_max(x, n, rng, law="laplace", report="index").astype(np.int64, copy=False)


def _sample_rnm2(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Report noisy max, exponential noise of scale 2 / 0.1: the argmax index; ``(n,)``, int64."""
    return _noisy_max(x, n, rng, law="exponential", report="index").astype(np.int64, copy=False)


def _sample_rnm3(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Noisy max with Lap(2 / 0.1) noise that releases the max value; ``(n,)``, float64."""
    return _noisy_max(x, n, rng, law="laplace", report="value").astype(np.float64, copy=False)


def _sample_rnm4(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Noisy max with exponential noise (scale 2 / 0.1) that releases the max value; ``(n,)``, float64."""
    return _noisy_max(x, n, rng, law="exponential", report="value").astype(np.float64, copy=False)


def _svt_flags(
    x: NDArray[np.float64],
    n: int,
    rng: np.random.Generator,
    *,
    threshold: float,
    rho_scale: float,
    nu_scale: float,
    cutoff: int | None,
    refresh: bool = False,
) -> NDArray[np.int64]:
    """Sparse vector with binary answers: 1 above, 0 below, -1 after ``cutoff`` answers above.

    Query ``j`` is above when ``x[j] + nu_j >= threshold + rho``, with ``rho ~ Lap(rho_scale)``
    and ``nu_j ~ Lap(nu_scale)`` (no query noise when ``nu_scale == 0``). With ``refresh`` the
    threshold noise is redrawn after each answer above (Lyu et al., Alg. 2). ``cutoff=None``
    never stops.
    """
    noisy_threshold = _laplace(rng, rho_scale, n)
    noisy_threshold += threshold
    out = np.empty((n, x.size), dtype=np.int64)
    count = np.zeros(n, dtype=np.int64)
    for j, value in enumerate(x):
        if nu_scale > 0.0:
            answer = _laplace(rng, nu_scale, n)
            answer += value
            above = answer >= noisy_threshold
        else:
            above = value >= noisy_threshold
        if cutoff is None:
            out[:, j] = above
            continue
        active = count < cutoff
        column = above.astype(np.int64)
        column[~active] = -1
        out[:, j] = column
        hit = above & active
        count += hit
        if refresh:
            renew = hit & (count < cutoff)
            k = int(np.count_nonzero(renew))
            if k:
                noisy_threshold[renew] = threshold + _laplace(rng, rho_scale, k)
    return out


def _svt_values(
    x: NDArray[np.float64],
    n: int,
    rng: np.random.Generator,
    *,
    threshold: float,
    rho_scale: float,
    nu_scale: float,
    value_scale: float | None,
    cutoff: int,
) -> NDArray[np.float64]:
    """Sparse vector that releases values: columns ``[flags | values]``, shape ``(n, 2 * len(x))``.

    Flags are 1 (above), 0 (below), -1 (stopped after ``cutoff`` answers above). The value column
    holds the released number where the flag is 1 and 0.0 elsewhere: the compared noisy answer
    ``x[j] + nu_j`` when ``value_scale is None`` (Lyu et al., Alg. 3), else a fresh
    ``x[j] + Lap(value_scale)`` (numerical sparse vector).
    """
    m = x.size
    noisy_threshold = _laplace(rng, rho_scale, n)
    noisy_threshold += threshold
    out = np.zeros((n, 2 * m))
    count = np.zeros(n, dtype=np.int64)
    for j, value in enumerate(x):
        answer = _laplace(rng, nu_scale, n)
        answer += value
        above = answer >= noisy_threshold
        active = count < cutoff
        hit = above & active
        flags = above.astype(np.float64)
        flags[~active] = -1.0
        out[:, j] = flags
        if value_scale is None:
            out[hit, m + j] = answer[hit]
        else:
            k = int(np.count_nonzero(hit))
            out[hit, m + j] = value + _laplace(rng, value_scale, k)
        count += hit
    return out


_SVT3_SCALES: Final = (1.0 / (_EPSILON / 2), 1.0 / (_EPSILON / 2))
"""(rho, nu) scales of Lyu et al. Alg. 3 at c = 1: Lap(1 / eps1) and Lap(c / eps2), eps1 = eps2 = eps / 2."""
_SVT4_SCALES: Final = (1.0 / (_EPSILON / 4), 1.0 / (3 * _EPSILON / 4))
"""(rho, nu) scales of Lyu et al. Alg. 4: Lap(1 / eps1), Lap(1 / eps2), eps1 = eps / 4, eps2 = 3 eps / 4."""
_SVT56_SCALE: Final = 1.0 / (_EPSILON / 2)


def _sample_svt1(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Lyu et al. Alg. 1 (c = 1, T = 0.5): rho ~ Lap(20), nu ~ Lap(40); ``(n, 10)`` int64 flags 1/0/-1."""
    return _svt_flags(x, n, rng, threshold=0.5, rho_scale=20.0, nu_scale=40.0, cutoff=1)


def _sample_svt2(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Lyu et al. Alg. 2 (c = 1, T = 1): rho ~ Lap(20) redrawn after each 1, nu ~ Lap(40); flags 1/0/-1."""
    return _svt_flags(x, n, rng, threshold=1.0, rho_scale=20.0, nu_scale=40.0, cutoff=1, refresh=True)


def _sample_svt3(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Lyu et al. Alg. 3 (c = 1, T = 1): rho ~ Lap(20), nu ~ Lap(20); ``(n, 20)``: [flags | answers]."""
    rho, nu = _SVT3_SCALES
    return _svt_values(x, n, rng, threshold=1.0, rho_scale=rho, nu_scale=nu, value_scale=None, cutoff=1)


def _sample_svt4(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Lyu et al. Alg. 4 (c = 1, T = 1): rho ~ Lap(40), nu ~ Lap(40 / 3); ``(n, 10)`` int64 flags 1/0/-1."""
    rho, nu = _SVT4_SCALES
    return _svt_flags(x, n, rng, threshold=1.0, rho_scale=rho, nu_scale=nu, cutoff=1)


def _sample_svt5(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Lyu et al. Alg. 5 (T = 1): rho ~ Lap(20), no query noise, no cutoff; ``(n, 10)`` int64 flags 1/0."""
    return _svt_flags(x, n, rng, threshold=1.0, rho_scale=_SVT56_SCALE, nu_scale=0.0, cutoff=None)


def _sample_svt6(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Lyu et al. Alg. 6 (T = 1): rho ~ Lap(20), nu ~ Lap(20), no cutoff; ``(n, 10)`` int64 flags 1/0."""
    return _svt_flags(x, n, rng, threshold=1.0, rho_scale=_SVT56_SCALE, nu_scale=_SVT56_SCALE, cutoff=None)


# RAPPOR: Bloom filter with MurmurHash3 (x86, 32 bit) of the value's decimal string, seeds 0..h-1


_MASK32: Final = 0xFFFFFFFF


def _rotl32(value: int, shift: int) -> int:
    """Rotate a 32-bit word left."""
    return ((value << shift) | (value >> (32 - shift))) & _MASK32


def _murmur3_32(data: bytes, seed: int) -> int:
    """MurmurHash3_x86_32 of ``data`` (unsigned 32-bit result)."""
    c1, c2 = 0xCC9E2D51, 0x1B873593
    h = seed & _MASK32
    blocks = len(data) // 4
    for i in range(blocks):
        k = int.from_bytes(data[4 * i : 4 * i + 4], "little")
        k = (_rotl32((k * c1) & _MASK32, 15) * c2) & _MASK32
        h = (_rotl32(h ^ k, 13) * 5 + 0xE6546B64) & _MASK32
    tail = data[4 * blocks :]
    if tail:
        k = int.from_bytes(tail, "little")
        h ^= (_rotl32((k * c1) & _MASK32, 15) * c2) & _MASK32
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK32
    return h ^ (h >> 16)


def _bloom_bits(value: int) -> frozenset[int]:
    """Bloom-filter positions of an integer value: signed MurmurHash3 of ``str(value)`` modulo 20."""
    data = str(value).encode()
    positions = set()
    for seed in range(_RAPPOR_HASHES):
        h = _murmur3_32(data, seed)
        signed = h - (1 << 32) if h >= 1 << 31 else h
        positions.add(signed % _RAPPOR_BITS)
    return frozenset(positions)


def _permanent_response(bit: bool, u: NDArray[np.float64], f: float) -> NDArray[np.bool_]:
    """Permanent randomized response: 1 w.p. f/2, 0 w.p. f/2, the Bloom bit w.p. 1 - f."""
    if bit:
        return (u < f / 2) | (u >= f)
    return u < f / 2


def _sample_rappor(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """RAPPOR steps 1-3 (h = 4, k = 20, f = 0.75, p = 0.45, q = 0.55); ``(n, 20)`` int64 bits 0/1.

    Step 1 sets the Bloom bits of ``str(int(x[0]))``; step 2 draws a fresh permanent randomized
    response per call; step 3 reports 1 with probability q where that response is 1 and p where
    it is 0.
    """
    bits = _bloom_bits(int(x[0]))
    out = np.empty((n, _RAPPOR_BITS), dtype=np.int64)
    for j in range(_RAPPOR_BITS):
        permanent = _permanent_response(j in bits, rng.random(n), _RAPPOR_F)
        out[:, j] = rng.random(n) < np.where(permanent, _RAPPOR_Q, _RAPPOR_P)
    return out


def _sample_one_time_rappor(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """RAPPOR steps 1-2 (h = 4, k = 20, f = 0.95): the permanent response; ``(n, 20)`` int64 bits 0/1."""
    bits = _bloom_bits(int(x[0]))
    out = np.empty((n, _RAPPOR_BITS), dtype=np.int64)
    for j in range(_RAPPOR_BITS):
        out[:, j] = _permanent_response(j in bits, rng.random(n), _OTR_F)
    return out


def _sample_laplace_parallel(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """20 independent Laplace mechanisms at eps = 0.005: ``x[0] + Lap(200)`` per column; ``(n, 20)``."""
    return _noisy_columns(np.full(_PARALLEL_COPIES, x[0]), n, rng, 1.0 / _PARALLEL_EPSILON)


def _sample_svt34_parallel(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Alg. 3 and Alg. 4 of Lyu et al. at c = 2, T = 1, independent; ``(n, 30)`` float64.

    Columns 0-9: Alg. 3 flags (1/0/-1); 10-19: Alg. 3 released noisy answers (0.0 unless the flag
    is 1); 20-29: Alg. 4 flags (1/0/-1). Alg. 3 uses rho ~ Lap(20), nu ~ Lap(c / eps2) = Lap(40);
    Alg. 4 uses rho ~ Lap(40), nu ~ Lap(40 / 3).
    """
    out = np.empty((n, 3 * x.size))
    out[:, : 2 * x.size] = _svt_values(
        x, n, rng, threshold=1.0, rho_scale=20.0, nu_scale=40.0, value_scale=None, cutoff=2
    )
    rho, nu = _SVT4_SCALES
    out[:, 2 * x.size :] = _svt_flags(x, n, rng, threshold=1.0, rho_scale=rho, nu_scale=nu, cutoff=2)
    return out


def _sample_prefix_sum(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """PrefixSum: column j is ``sum_{i <= j} (x[i] + Lap(1 / 0.1))``; ``(n, 10)`` float64."""
    out = np.empty((n, x.size))
    running = np.zeros(n)
    for j, value in enumerate(x):
        running += _laplace(rng, 1.0 / _EPSILON, n)
        running += value
        out[:, j] = running
    return out


def _sample_numerical_svt(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Numerical sparse vector (c = 2, T = 1): ``(n, 20)`` = [flags 1/0/-1 | released values].

    rho1 ~ Lap(3 / eps) = Lap(30) on the threshold, rho2 ~ Lap(6c / eps) = Lap(120) on each
    comparison, and each answer above releases a fresh ``x[j] + Lap(3c / eps)`` = Lap(60) draw;
    the value column is 0.0 where the flag is not 1 (the algorithm outputs 0 for answers below).
    """
    return _svt_values(x, n, rng, threshold=1.0, rho_scale=30.0, nu_scale=120.0, value_scale=60.0, cutoff=2)


# ---------------------------------------------------------------------------------------------
# Published lower bounds (eth-sri/dp-sniper, eval_sp2021/reference-results/*.log)

_LOGISTIC: Final = "reg"
_MLP: Final = "mlp"
_STATDP_1: Final = "statdp_1"
_STATDP_2: Final = "statdp_2"
_TOOLS: Final = {
    _LOGISTIC: ("DP-Sniper (logistic)", "dd_search_reg_data.log"),
    _MLP: ("DP-Sniper (MLP)", "dd_search_mlp_data.log"),
    _STATDP_1: ("StatDP", "statdp_1_data.log"),
    _STATDP_2: ("StatDP", "statdp_2_data.log"),
}
_CONFIDENCE_LEVEL: Final = 0.9
_N_TRAIN: Final = 10_700_000
_N_THRESHOLD: Final = 10_700_000
_N_CHECK: Final = 10_700_000
_N_FINAL: Final = 200_000_000
_CALLS_PER_PAIR: Final = 2 * _N_TRAIN + _N_THRESHOLD + 2 * _N_CHECK
"""DP-Sniper, per input pair: training draws on both inputs, threshold draws on a2, check on both."""

_PUBLISHED_RAW: Final = {
    "LaplaceMechanism": (
        (_LOGISTIC, 0.09680373477842874, "1", "2"),
        (_MLP, 0.09763363715243845, "0", "1"),
        (_STATDP_1, 0.09981418282420251, "1", "0"),
        (_STATDP_2, 0.09961720683589348, "1", "2"),
    ),
    "TruncatedGeometricMechanism": (
        (_LOGISTIC, 0.11556448250263873, "2", "1"),
        (_MLP, 0.11554327252275165, "2", "1"),
        (_STATDP_1, 0.11588070285791208, "1", "2"),
        (_STATDP_2, 0.11685385390209024, "1", "0"),
    ),
    "NoisyHist1": (
        (_LOGISTIC, 0.09779357853762427, "01111", "11111"),
        (_MLP, 0.09769858890379979, "11111", "01111"),
        (_STATDP_1, 0.08283071852918455, "11111", "21111"),
        (_STATDP_2, 0.09943568335950492, "11111", "21111"),
    ),
    "NoisyHist2": (
        (_LOGISTIC, 4.60202151350145, "01111", "11111"),
        (_MLP, 4.601469785311435, "11111", "21111"),
        (_STATDP_1, 9.7169265671521, "11111", "21111"),
        (_STATDP_2, 10.002168576736125, "11111", "21111"),
    ),
    "ReportNoisyMax1": (
        (_LOGISTIC, 0.09225381318933756, "11111", "02222"),
        (_MLP, 0.09250095026875194, "11111", "02222"),
        (_STATDP_1, 0.09195171216431208, "11111", "20000"),
        (_STATDP_2, 0.0921021169451548, "11111", "20000"),
    ),
    "ReportNoisyMax2": (
        (_LOGISTIC, 0.09750314019873763, "11111", "02222"),
        (_MLP, 0.09792031720947492, "11111", "02222"),
        (_STATDP_1, 0.09957525329005956, "11111", "02222"),
        (_STATDP_2, 0.09967230375558023, "11111", "20000"),
    ),
    "ReportNoisyMax3": (
        (_LOGISTIC, 0.24781576679261352, "00000", "11111"),
        (_MLP, 0.2488099442765046, "11111", "22222"),
        (_STATDP_1, 0.1991418003968266, "11111", "22222"),
        (_STATDP_2, 0.1960705014773274, "11111", "00000"),
    ),
    "ReportNoisyMax4": (
        (_LOGISTIC, 0.34634322696561437, "11111", "22222"),
        (_MLP, 0.35344366038471353, "11111", "22222"),
        (_STATDP_1, 0.19601980077941494, "11111", "22222"),
        (_STATDP_2, 0.1988300779701171, "11111", "00000"),
    ),
    "SparseVectorTechnique1": (
        (_LOGISTIC, 0.08579843744077742, "0000011111", "1111100000"),
        (_MLP, 0.0857818700940598, "1111111111", "2222200000"),
        (_STATDP_1, 0.029753775766650392, "1111100000", "0000011111"),
        (_STATDP_2, 0.029845918933959936, "1111100000", "0000011111"),
    ),
    "SparseVectorTechnique2": (
        (_LOGISTIC, 0.085933777378977, "0000011111", "1111100000"),
        (_MLP, 0.08524718743004556, "0000011111", "1111100000"),
        (_STATDP_1, 0.031642012639005124, "1111111111", "2222200000"),
        (_STATDP_2, 0.040683452034789624, "1111111111", "2222200000"),
    ),
    "SparseVectorTechnique3": (
        (_LOGISTIC, 0.17157204754154964, "1111111111", "2222200000"),
        (_MLP, 0.1821683565930945, "0000011111", "1111100000"),
        (_STATDP_1, 0.023061332406729917, "1111111111", "0111111111"),
        (_STATDP_2, 0.17928544503534738, "1111111111", "2000000000"),
    ),
    "SparseVectorTechnique4": (
        (_LOGISTIC, 0.1686833019846503, "1111111111", "2222200000"),
        (_MLP, 0.16956867255560404, "1111111111", "2222200000"),
        (_STATDP_1, 0.17085960551924195, "1111111111", "2222200000"),
        (_STATDP_2, 0.17190839183318207, "1111111111", "2222200000"),
    ),
    "SparseVectorTechnique5": (
        (_LOGISTIC, 1.7611853568928795, "2222200000", "1111111111"),
        (_MLP, 1.760988163636311, "0222222222", "1111111111"),
        (_STATDP_1, 14.314308557571438, "1111111111", "2222200000"),
        (_STATDP_2, 14.314307341616473, "1111111111", "0222222222"),
    ),
    "SparseVectorTechnique6": (
        (_LOGISTIC, 0.2720409230566201, "1111100000", "0000011111"),
        (_MLP, 0.269826687868739, "0000011111", "1111100000"),
        (_STATDP_1, 0.32203660515097443, "1111100000", "0000011111"),
        (_STATDP_2, 0.3199544091460842, "1111100000", "0000011111"),
    ),
    "Rappor": (
        (_LOGISTIC, 0.2929848129867416, "1", "0"),
        (_MLP, 0.30080244946686197, "1", "0"),
        (_STATDP_1, 0.2415825425465492, "1", "0"),
        (_STATDP_2, 0.024254948245880925, "1", "0"),
    ),
    "OneTimeRappor": (
        (_LOGISTIC, 0.5977779392161473, "1", "0"),
        (_MLP, 0.5998986783208569, "0", "1"),
        (_STATDP_1, 0.4706352801234841, "1", "2"),
        (_STATDP_2, 0.060191745045908185, "1", "0"),
    ),
    "LaplaceParallel": (
        (_LOGISTIC, 0.03495277953654963, "1", "0"),
        (_MLP, 0.029869306141541152, "0", "1"),
        (_STATDP_1, 0.012592981052077068, "1", "2"),
        (_STATDP_2, 0.013493289334906677, "1", "2"),
    ),
    "SVT34Parallel": (
        (_LOGISTIC, 0.2610381735699283, "1111111111", "2222200000"),
        (_MLP, 0.26162082346312676, "1111111111", "2222200000"),
        (_STATDP_1, 0.1370886491760004, "1111111111", "0222222222"),
        (_STATDP_2, 0.19632395827496651, "1111111111", "0000000000"),
    ),
    "PrefixSum": (
        (_LOGISTIC, 0.5040117462103613, "1111111111", "0000000000"),
        (_MLP, 0.5774330979382549, "1111111111", "0000000000"),
        (_STATDP_1, 0.35160641681052285, "1111111111", "2222222222"),
        (_STATDP_2, 0.3445934123089889, "1111111111", "0000000000"),
    ),
    "NumericalSVT": (
        (_LOGISTIC, 0.034323746664875365, "2222222222", "1111111111"),
        (_MLP, 0.034501347436509455, "1111100000", "0000011111"),
    ),
}
"""(tool tag, eps_lcb, a1, a2) per mechanism; the digits of a1, a2 are the input entries."""

_STATDP_CAVEATS: Final = {
    "SparseVectorTechnique5": (
        " StatDP ran its iSVT1 with epsilon = 0.05, i.e. threshold noise Lap(40) instead of this"
        " mechanism's Lap(20); both variants have infinite privacy loss."
    ),
    "Rappor": (
        " StatDP's wrapper hashes str(float(value)) ('1.0', not '1') and passes p and q swapped, so"
        " its Bloom filters for this pair differ from the suite's (the swap itself complements the"
        " reported bits and does not change the privacy loss)."
    ),
    "OneTimeRappor": (
        " StatDP's wrapper hashes str(float(value)) ('1.0', not '1'), so its Bloom filters for this"
        " pair differ from the suite's."
    ),
}


def _vector(digits: str) -> tuple[float, ...]:
    """An input vector written as a string of digits."""
    return tuple(float(d) for d in digits)


def _published(name: str, component_wise: bool) -> tuple[PublishedBound, ...]:
    """The PublishedBound entries of one mechanism."""
    pairs_searched = 16 if component_wise else 4
    dpsniper_calls = pairs_searched * _CALLS_PER_PAIR + 2 * _N_FINAL
    bounds = []
    for tag, value, a, b in _PUBLISHED_RAW[name]:
        tool, log_file = _TOOLS[tag]
        where = f"eth-sri/dp-sniper, eval_sp2021/reference-results/{log_file}, ctx '{name}'"
        if tool.startswith("DP-Sniper"):
            reference = (
                f"Bichsel et al., IEEE S&P 2021; {where}: best_result (a1, a2) and the final eps_lcb."
                f" Calls: {pairs_searched} input pairs x (2 n_train + n + 2 n_check = {_CALLS_PER_PAIR:,})"
                f" + 2 n_final = {2 * _N_FINAL:,} (dpsniper/search/ddconfig.py defaults)."
            )
            calls: int | None = dpsniper_calls
        else:
            reference = (
                f"Ding et al., CCS 2018 (StatDP) run through DP-Sniper's statdpwrapper; {where}:"
                f" statdp_result (a1, a2, eps_lcb), the event re-estimated with n_final = {_N_FINAL:,}"
                " calls per input (probabilities may be swapped: the bound holds for one of the two"
                " orders). Search calls are not recorded." + _STATDP_CAVEATS.get(name, "")
            )
            calls = None
        bounds.append(
            PublishedBound(
                tool=tool,
                epsilon_lower=float(value),
                confidence_level=_CONFIDENCE_LEVEL,
                calls=calls,
                input_a=_vector(a),
                input_b=_vector(b),
                reference=reference,
            )
        )
    return tuple(bounds)


def _statdp_patterns(length: int, all_differ: bool) -> list[_Pair]:
    """StatDP's standard input pairs (statdp.generators.generate_databases) for ``length`` queries."""
    ones = (1.0,) * length
    half = length // 2
    pairs: list[_Pair] = [
        (ones, (0.0,) + (1.0,) * (length - 1)),
        (ones, (2.0,) + (1.0,) * (length - 1)),
    ]
    if all_differ:
        pairs += [
            (ones, (2.0,) + (0.0,) * (length - 1)),
            (ones, (0.0,) + (2.0,) * (length - 1)),
            (ones, (2.0,) * half + (0.0,) * (length - half)),
            (ones, (2.0,) * length),
            (ones, (0.0,) * length),
            ((1.0,) * half + (0.0,) * (length - half), (0.0,) * half + (1.0,) * (length - half)),
        ]
    return pairs


def _input_pairs(published: tuple[PublishedBound, ...], length: int, all_differ: bool) -> tuple[_Pair, ...]:
    """Best published pair first, then the other published pairs, then StatDP's patterns; no repeats."""
    ranked = sorted(published, key=lambda b: -b.epsilon_lower)
    candidates = [(b.input_a, b.input_b) for b in ranked[:1]]
    candidates += [(b.input_a, b.input_b) for b in published]
    candidates += _statdp_patterns(length, all_differ)
    seen: set[frozenset[tuple[float, ...]]] = set()
    pairs: list[_Pair] = []
    for a, b in candidates:
        key = frozenset((a, b))
        if key not in seen:
            seen.add(key)
            pairs.append((a, b))
    return tuple(pairs)


# ---------------------------------------------------------------------------------------------
# Claims and exact privacy losses

_Q_STAR: Final = 0.5 * _RAPPOR_F * (_RAPPOR_P + _RAPPOR_Q) + (1 - _RAPPOR_F) * _RAPPOR_Q
_P_STAR: Final = 0.5 * _RAPPOR_F * (_RAPPOR_P + _RAPPOR_Q) + (1 - _RAPPOR_F) * _RAPPOR_P
_RAPPOR_EPSILON: Final = _RAPPOR_HASHES * math.log(_Q_STAR * (1 - _P_STAR) / (_P_STAR * (1 - _Q_STAR)))
"""RAPPOR's one-report guarantee epsilon_1 = h ln(q*(1 - p*) / (p*(1 - q*))) = 8 ln(0.5125 / 0.4875)."""
_OTR_EPSILON: Final = 2 * _RAPPOR_HASHES * math.log((1 - _OTR_F / 2) / (_OTR_F / 2))
"""RAPPOR's permanent-response guarantee epsilon_inf = 2h ln((1 - f/2) / (f/2)) at f = 0.95."""
_PARALLEL_CLAIM: Final = _PARALLEL_COPIES * _PARALLEL_EPSILON
_SVT4_TRUE: Final = 1 / _SVT4_SCALES[0] + 2 / _SVT4_SCALES[1]
_SVT34_TRUE: Final = 10 / 40.0 + (1 / _SVT4_SCALES[0] + 4 / _SVT4_SCALES[1])

_LAPLACE_NOTE: Final = (
    "Laplace mechanism with sensitivity 1 and scale 1/eps = 10: for |x - x'| <= 1 the density ratio"
    " is at most e^(eps |x - x'|) and equals e^eps on the half-line beyond both inputs, so the loss"
    " is exactly eps = 0.1 (Dwork et al. 2006; Dwork and Roth 2014, Thm 3.6)."
)
_TG_NOTE: Final = (
    "GeoSample outputs z in {0..5} with P(z) proportional to a^|z - c| (tails folded onto 0 and 5),"
    " a = 2^k / (2^k + 1); for adjacent counts every output's likelihood ratio is a or 1/a, so the"
    " loss is exactly ln(1 + 2^-k). This implementation uses DP-Sniper's k = ceil(ln(2/eps)) ="
    " ceil(ln 20) = 3 (natural logarithm): true epsilon ln(9/8) = 0.1178 > 0.1, a violation."
    " Balcer and Vadhan (arXiv:1709.05396, Alg. 4.8, Thm 4.7) set k = ceil(log(2/eps)) and prove"
    " ln(1 + 2^-k)-DP; read with the base-2 logarithm (the reading under which"
    " ln(1 + 2^-k) <= 2^-k <= eps/2), k = 5 and the loss is ln(33/32) = 0.0308 <= 0.1: the"
    " violation comes from the natural logarithm, not from GeoSample."
)
_HIST1_NOTE: Final = (
    "Each bin gets Lap(1/eps); neighbours differ in one bin by at most 1, so the loss is exactly"
    " eps = 0.1 (Laplace mechanism, attained on tail events)."
)
_HIST2_NOTE: Final = (
    "Scale eps = 0.1 instead of 1/eps: a unit change in one bin multiplies the density by up to"
    " e^(1/0.1) = e^10, attained on tail events: true epsilon 1/eps = 10."
)
_RNM1_NOTE: Final = (
    "Upper bound eps: P(i | x) = int f(v - x_i) prod_j F(v - x_j) dv; substituting v -> v + 1 shows"
    " P(i | x') >= e^(-2/b) P(i | x) for |x_j - x'_j| <= 1 with b = 2/eps. The bound is a supremum,"
    " not attained: for x = (0, M, M, M, M), x' = (-1, M+1, ..., M+1) and output 0, index 0 wins only"
    " in the exponential tail of its noise and the ratio tends to e^(2/b) = e^eps as M -> inf. True"
    " epsilon 0.1."
)
_RNM2_NOTE: Final = (
    "Exponential noise of scale b = 2/eps: the same substitution bounds the loss by 2/b = eps, and it"
    " is attained: for x = (1, 1, 1, 1, 1), x' = (0, 2, 2, 2, 2) and output 0,"
    " P(0 | x') = E[e^-(W+2)/b] = e^(-2/b) P(0 | x) where W >= 0 is the largest other noise. True"
    " epsilon exactly 0.1."
)
_RNM3_NOTE: Final = (
    "The max value is a function of x + Lap(b)^5 with b = 2/eps, so the loss is at most"
    " ||x - x'||_1 / b <= 5/b = 2.5 eps; attained: shifting all five answers by 1 multiplies"
    " P(max <= t) = prod_j F(t - x_j) by e^(5/b) for every t <= min_j x_j. True epsilon 0.25."
)
_RNM4_NOTE: Final = (
    "Exponential noise is non-negative, so max_j (x_j + E_j) >= max_j x_j: for x = (1, ..., 1) and"
    " x' = (2, ..., 2) the event max < 2 has positive probability under x and zero under x'. True"
    " epsilon infinite."
)
_SVT_C1_NOTE: Final = (
    "Upper bound 1/b_rho + 2/b_nu = {bound}: shifting the threshold noise by 1 costs e^(1/b_rho),"
    " leaves every 0 factor no smaller and costs at most e^(2/b_nu) on the single 1 (c = 1), with"
    " rho ~ Lap(b_rho) and nu ~ Lap(b_nu). It is a supremum, approached"
    " (not attained) for x' = x + 1 on queries 1..k-1 and x - 1 on query k with x_1..x_(k-1) = M,"
    " x_k = -M, output (0, ..., 0, 1, -1, ...), k >= 5, as M -> inf: the mass concentrates where"
    " both Laplace ratios are exact. {origin}"
)
_SVT1_NOTE: Final = _SVT_C1_NOTE.format(
    bound="1/20 + 2/40 = 0.1",
    origin="Lyu et al. prove eps-DP for Alg. 1. True epsilon 0.1.",
)
_SVT2_NOTE: Final = _SVT_C1_NOTE.format(
    bound="1/20 + 2/40 = 0.1",
    origin=(
        "With c = 1 the threshold is never used after its refresh, so the output law is that of"
        " Alg. 1 with T = 1; Lyu et al. prove eps-DP for Alg. 2. True epsilon 0.1."
    ),
)
_SVT3_NOTE: Final = (
    "For fixed threshold noise each answered query contributes a factor F, or the density of the"
    " released x_j + nu_j, whose ratio is at most e^(1/b_nu) with b_nu = c/eps2 = 20; at most 10"
    " queries are answered, so the loss is at most 10/20 = 0.5. Attained exactly: x = (1, ..., 1, 0),"
    " x' = (2, ..., 2, -1), output nine 0s then a released value v in [0, 1] (all factors in their"
    " exponential tails). True epsilon 0.5 (unbounded in the number of queries, as Lyu et al. show)."
)
_SVT4_NOTE: Final = _SVT_C1_NOTE.format(
    bound="1/40 + 2/(40/3) = 0.175",
    origin=(
        "This is Lyu et al.'s ((1 + 6c)/4) eps at c = 1 for Alg. 4 (eps1 = eps/4). True epsilon 0.175."
    ),
)
_SVT5_NOTE: Final = (
    "No noise on the queries: the output is a deterministic function of the noisy threshold. For"
    " x = (1, ..., 1) every output is all 0s or all 1s, while x' = (2, 2, 2, 2, 2, 0, 0, 0, 0, 0)"
    " gives (1, 1, 1, 1, 1, 0, 0, 0, 0, 0) with positive probability. True epsilon infinite."
)
_SVT6_NOTE: Final = (
    "No cutoff: for fixed threshold noise each of the 10 answers has ratio at most e^(1/b_nu),"
    " b_nu = 1/eps2 = 20, so the loss is at most 10/20 = 0.5. It is a supremum, approached as"
    " M -> inf for x = (M^5, (-M)^5), x' = x + 1 on the first five and x - 1 on the last five,"
    " output (0^5, 1^5): on the bulk of the threshold noise all ten factors are in their exact"
    " exponential tails. True epsilon 0.5 (unbounded in the number of queries, Lyu et al.)."
)
_RAPPOR_NOTE: Final = (
    "Per bit, P(report 1 | Bloom bit 1) = q* = f(p+q)/2 + (1-f) q = 0.5125 and"
    " P(report 1 | bit 0) = p* = 0.4875, bits independent; since p* + q* = 1 the loss between two"
    " values is |A xor B| ln(q*/p*) for Bloom sets A, B. At most 2h = 8 bits differ, and exactly 8"
    " do for -8 ({3, 5, 12, 18}) and -6 ({1, 2, 4, 16}), so the supremum over values is"
    " 8 ln(0.5125/0.4875) = RAPPOR's epsilon_1 = h ln(q*(1-p*)/(p*(1-q*))) = 0.4001. The pair"
    " (1, 0) differs in 6 bits, loss 0.3001 (DP-Sniper's MLP bound for that pair, 0.3008 at level"
    " 0.9, is just above it)."
)
_OTR_NOTE: Final = (
    "Per bit, the permanent response is 1 w.p. 1 - f/2 = 0.525 if the Bloom bit is 1 and f/2 = 0.475"
    " if 0; the loss between two values is |A xor B| ln(0.525/0.475), at most 8 bits differ and"
    " exactly 8 do for -8 and -6: true epsilon 8 ln(0.525/0.475) = RAPPOR's"
    " epsilon_inf = 2h ln((1 - f/2)/(f/2)) = 0.8007. The pair (1, 0) differs in 6 bits: 0.6005."
)
_PARALLEL_NOTE: Final = (
    "Twenty independent Lap(200) releases of the same value: the loss adds up to exactly"
    " 20 x 0.005 = 0.1 for |x - x'| = 1 (attained on products of tail events)."
)
_SVT34_NOTE: Final = (
    "Independent runs, so the loss is at most the sum: Alg. 3 at c = 2 (b_nu = c/eps2 = 40) has"
    " loss at most 10/40 = 0.25 (pointwise in the threshold noise, as for SparseVectorTechnique3),"
    " Alg. 4 at c = 2 has at most 1/40 + 4/(40/3) = 0.325 (Lyu et al.'s (1 + 6c)/4 eps). Both are"
    " approached on the same inputs, x = (M^8, -M, -M), x' = x + 1 on the first eight and x - 1 on"
    " the last two, outputs eight 0s then two 1s (Alg. 3 values in [-M, M]), as M -> inf. True"
    " epsilon 0.575 against the claim 2 x 0.1."
)
_PREFIX_NOTE: Final = (
    "The output is an invertible linear map of x + Lap(1/eps)^10, so the loss equals the Laplace"
    " mechanism's ||x - x'||_1 eps. Under the all-differ relation of this suite (and of both tools'"
    " tests) ||x - x'||_1 can be 10: true epsilon 10 eps = 1.0, attained (x = 1s, x' = 0s). The"
    " 0.1-DP claim of Wang et al. holds when one answer changes by at most 1 (loss exactly eps)."
)
_NUMSVT_NOTE: Final = (
    "Upper bound 1/30 + 2c/120 + c/60 = 0.1 at c = 2: shifting the threshold noise by 1 costs 1/30,"
    " each of the c comparisons above at most 2/120 and each released Lap(60) value at most 1/60"
    " (Wang et al. prove eps-DP). Approached as M -> inf with x = (M^8, -M, -M), x' = x + 1 on the"
    " first eight and x - 1 on the last two, output eight 0s then two released values above both"
    " inputs. True epsilon 0.1."
)

_LYU: Final = (
    "Lyu, Su and Li, 'Understanding the Sparse Vector Technique for Differential Privacy',"
    " PVLDB 10(6), 2017"
)
_DING: Final = (
    "Ding, Wang, Wang, Zhang and Kifer, 'Detecting Violations of Differential Privacy', ACM CCS 2018"
)
_WANG: Final = (
    "Wang, Ding, Wang, Kifer and Zhang, 'Proving Differential Privacy with Shadow Execution', PLDI 2019"
)
_RAPPOR_SOURCE: Final = (
    "Erlingsson, Pihur and Korolova, 'RAPPOR: Randomized Aggregatable Privacy-Preserving Ordinal"
    " Response', ACM CCS 2014"
)
_SNIPER: Final = "parameters of Bichsel et al., 'DP-Sniper', IEEE S&P 2021"

_INF: Final = math.inf

_KNOWN_VIOLATIONS: Final = frozenset({
    "TruncatedGeometricMechanism", "NoisyHist2", "ReportNoisyMax3", "ReportNoisyMax4",
    "SparseVectorTechnique3", "SparseVectorTechnique4", "SparseVectorTechnique5",
    "SparseVectorTechnique6", "SVT34Parallel", "PrefixSum",
})
"""Mechanisms whose true epsilon exceeds their claim (checked against ``true_epsilon`` on construction)."""

# name, claimed, true, note, source, kind, dim, sampler, input length, input kind, range, all-differ
_SPECS: Final[tuple[tuple[Any, ...], ...]] = (
    ("LaplaceMechanism", _EPSILON, _EPSILON, _LAPLACE_NOTE,
     f"Dwork, McSherry, Nissim and Smith, 'Calibrating Noise to Sensitivity in Private Data Analysis',"
     f" TCC 2006 (Laplace mechanism), eps = 0.1; {_SNIPER}",
     "continuous", 1, _sample_laplace, 1, "real", (-_INF, _INF), False),
    ("TruncatedGeometricMechanism", _EPSILON, math.log1p(2.0**-_TG_K), _TG_NOTE,
     "Balcer and Vadhan, 'Differential Privacy on Finite Computers', ITCS 2018 (arXiv:1709.05396),"
     f" Alg. 4.8 GeoSample, n = 5, with k = ceil(ln(2/eps)) as in DP-Sniper's implementation; {_SNIPER}",
     "discrete", 1, _sample_truncated_geometric, 1, "integer", (0.0, float(_TG_N)), False),
    ("NoisyHist1", _EPSILON, _EPSILON, _HIST1_NOTE, f"{_DING}, Alg. 9 (histogram), 5 bins",
     "continuous", _HIST_BINS, _sample_noisy_hist1, _HIST_BINS, "real", (-_INF, _INF), False),
    ("NoisyHist2", _EPSILON, 1.0 / _EPSILON, _HIST2_NOTE,
     f"{_DING}, Alg. 10 (histogram with scale eps), 5 bins",
     "continuous", _HIST_BINS, _sample_noisy_hist2, _HIST_BINS, "real", (-_INF, _INF), False),
    ("ReportNoisyMax1", _EPSILON, _EPSILON, _RNM1_NOTE,
     f"{_DING}, Alg. 5 (noisy max, Laplace noise, index), 5 queries",
     "discrete", 1, _sample_rnm1, _RNM_QUERIES, "real", (-_INF, _INF), True),
    ("ReportNoisyMax2", _EPSILON, _EPSILON, _RNM2_NOTE,
     f"{_DING}, Alg. 6 (noisy max, exponential noise, index), 5 queries",
     "discrete", 1, _sample_rnm2, _RNM_QUERIES, "real", (-_INF, _INF), True),
    ("ReportNoisyMax3", _EPSILON, 2.5 * _EPSILON, _RNM3_NOTE,
     f"{_DING}, Alg. 7 (noisy max, Laplace noise, max value), 5 queries",
     "continuous", 1, _sample_rnm3, _RNM_QUERIES, "real", (-_INF, _INF), True),
    ("ReportNoisyMax4", _EPSILON, _INF, _RNM4_NOTE,
     f"{_DING}, Alg. 8 (noisy max, exponential noise, max value), 5 queries",
     "continuous", 1, _sample_rnm4, _RNM_QUERIES, "real", (-_INF, _INF), True),
    ("SparseVectorTechnique1", _EPSILON, _EPSILON, _SVT1_NOTE, f"{_LYU}, Alg. 1; c = 1, T = 0.5, 10 queries",
     "discrete", _SVT_QUERIES, _sample_svt1, _SVT_QUERIES, "real", (-_INF, _INF), True),
    ("SparseVectorTechnique2", _EPSILON, _EPSILON, _SVT2_NOTE, f"{_LYU}, Alg. 2; c = 1, T = 1, 10 queries",
     "discrete", _SVT_QUERIES, _sample_svt2, _SVT_QUERIES, "real", (-_INF, _INF), True),
    ("SparseVectorTechnique3", _EPSILON, 0.5, _SVT3_NOTE, f"{_LYU}, Alg. 3; c = 1, T = 1, 10 queries",
     "mixed", 2 * _SVT_QUERIES, _sample_svt3, _SVT_QUERIES, "real", (-_INF, _INF), True),
    ("SparseVectorTechnique4", _EPSILON, _SVT4_TRUE, _SVT4_NOTE, f"{_LYU}, Alg. 4; c = 1, T = 1, 10 queries",
     "discrete", _SVT_QUERIES, _sample_svt4, _SVT_QUERIES, "real", (-_INF, _INF), True),
    ("SparseVectorTechnique5", _EPSILON, _INF, _SVT5_NOTE, f"{_LYU}, Alg. 5; T = 1, 10 queries",
     "discrete", _SVT_QUERIES, _sample_svt5, _SVT_QUERIES, "real", (-_INF, _INF), True),
    ("SparseVectorTechnique6", _EPSILON, 0.5, _SVT6_NOTE, f"{_LYU}, Alg. 6; T = 1, 10 queries",
     "discrete", _SVT_QUERIES, _sample_svt6, _SVT_QUERIES, "real", (-_INF, _INF), True),
    ("Rappor", _RAPPOR_EPSILON, _RAPPOR_EPSILON, _RAPPOR_NOTE,
     f"{_RAPPOR_SOURCE}, Sec. 2 steps 1-3 (h = 4, k = 20, f = 0.75, p = 0.45, q = 0.55); {_SNIPER}",
     "discrete", _RAPPOR_BITS, _sample_rappor, 1, "integer", (-_INF, _INF), False),
    ("OneTimeRappor", _OTR_EPSILON, _OTR_EPSILON, _OTR_NOTE,
     f"{_RAPPOR_SOURCE}, Sec. 2 steps 1-2 (h = 4, k = 20, f = 0.95); {_SNIPER}",
     "discrete", _RAPPOR_BITS, _sample_one_time_rappor, 1, "integer", (-_INF, _INF), False),
    ("LaplaceParallel", _PARALLEL_CLAIM, _PARALLEL_CLAIM, _PARALLEL_NOTE,
     f"20 Laplace mechanisms (Dwork et al., TCC 2006) at eps = 0.005 on the same value; {_SNIPER}",
     "continuous", _PARALLEL_COPIES, _sample_laplace_parallel, 1, "real", (-_INF, _INF), False),
    ("SVT34Parallel", 2 * _EPSILON, _SVT34_TRUE, _SVT34_NOTE,
     f"{_LYU}, Alg. 3 and Alg. 4 run independently on the same queries; c = 2, T = 1; {_SNIPER}",
     "mixed", 3 * _SVT_QUERIES, _sample_svt34_parallel, _SVT_QUERIES, "real", (-_INF, _INF), True),
    ("PrefixSum", _EPSILON, 10 * _EPSILON, _PREFIX_NOTE, f"{_WANG}, PrefixSum; 10 queries",
     "continuous", _SVT_QUERIES, _sample_prefix_sum, _SVT_QUERIES, "real", (-_INF, _INF), True),
    ("NumericalSVT", _EPSILON, _EPSILON, _NUMSVT_NOTE,
     f"{_WANG}, Numerical Sparse Vector; c = 2, T = 1, 10 queries",
     "mixed", 2 * _SVT_QUERIES, _sample_numerical_svt, _SVT_QUERIES, "real", (-_INF, _INF), True),
)


def _build_suite() -> Mapping[str, SuiteMechanism]:
    """Assemble the read-only suite mapping from the specifications above."""
    entries: dict[str, SuiteMechanism] = {}
    for (name, claimed, true_eps, note, source, kind, dim, sampler, length, input_kind, bounds,
         all_differ) in _SPECS:
        published = _published(name, all_differ)
        entries[name] = SuiteMechanism(
            name=name,
            claimed_epsilon=float(claimed),
            input_pairs=_input_pairs(published, length, all_differ),
            violates_claim=name in _KNOWN_VIOLATIONS,
            true_epsilon=float(true_eps),
            true_epsilon_note=note,
            source=source,
            published=published,
            output_kind=kind,
            output_dim=dim,
            sampler=sampler,
            input_length=length,
            input_kind=input_kind,
            input_range=(float(bounds[0]), float(bounds[1])),
        )
    return types.MappingProxyType(entries)


SUITE: Final[Mapping[str, SuiteMechanism]] = _build_suite()
"""The twenty mechanisms, read-only, in the order of the DP-Sniper evaluation."""
