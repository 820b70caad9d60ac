"""Published lower bounds of the suite's mechanisms and the :class:`PublishedBound` record.

:class:`PublishedBound` (with its validators) holds one lower bound on a mechanism's privacy loss
as a testing tool published it. The data are DP-Sniper's and StatDP's bounds from the DP-Sniper
artifact's ``eval_sp2021/reference-results/*.log`` files; ``_published`` builds a mechanism's
bounds and ``_input_pairs`` its tested input pairs for :mod:`certify.blackbox.suite`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Final, TypeAlias, final

import attrs

from certify.errors import ParameterError

if TYPE_CHECKING:  # typeguard skips these; attrs.Attribute is not subscriptable at run time
    from attrs import Attribute

__all__ = ["PublishedBound"]

_Pair: TypeAlias = tuple[tuple[float, ...], tuple[float, ...]]

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
