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

from certify.blackbox._published import (
    PublishedBound,
    _fail,
    _float_vector,
    _input_pairs,
    _nonempty_str,
    _Pair,
    _published,
)
from certify.blackbox._samplers import (
    _EPSILON,
    _HIST_BINS,
    _OTR_F,
    _PARALLEL_COPIES,
    _PARALLEL_EPSILON,
    _RAPPOR_BITS,
    _RAPPOR_F,
    _RAPPOR_HASHES,
    _RAPPOR_P,
    _RAPPOR_Q,
    _RNM_QUERIES,
    _SVT4_SCALES,
    _SVT_QUERIES,
    _TG_K,
    _TG_N,
    _sample_laplace,
    _sample_laplace_parallel,
    _sample_noisy_hist1,
    _sample_noisy_hist2,
    _sample_numerical_svt,
    _sample_one_time_rappor,
    _sample_prefix_sum,
    _sample_rappor,
    _sample_rnm1,
    _sample_rnm2,
    _sample_rnm3,
    _sample_rnm4,
    _sample_svt1,
    _sample_svt2,
    _sample_svt3,
    _sample_svt4,
    _sample_svt5,
    _sample_svt6,
    _sample_svt34_parallel,
    _sample_truncated_geometric,
)

# Sampler helpers that tests/blackbox/test_suite.py reaches as suite._NAME, re-exported from here.
from certify.blackbox._samplers import _TG_DENOMINATOR as _TG_DENOMINATOR
from certify.blackbox._samplers import _TG_TABLES as _TG_TABLES
from certify.blackbox._samplers import _bloom_bits as _bloom_bits
from certify.blackbox._samplers import _murmur3_32 as _murmur3_32
from certify.blackbox._samplers import _svt_flags as _svt_flags

if TYPE_CHECKING:  # typeguard skips these; attrs.Attribute is not subscriptable at run time
    from attrs import Attribute

__all__ = ["SUITE", "PublishedBound", "SuiteMechanism"]

OutputKind: TypeAlias = Literal["discrete", "continuous", "mixed"]
_Output: TypeAlias = NDArray[np.int64] | NDArray[np.float64]
_Sampler: TypeAlias = Callable[[NDArray[np.float64], int, np.random.Generator], _Output]

# ---------------------------------------------------------------------------------------------
# Validation


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
