"""Pre-registration protocol files (TOML): parsing and validation with precise errors.

A protocol file fixes, before any data are looked at, every choice of an audit: the split, the
candidate pairs, how pairs are selected, the test family, the confidence level and delta. The
schema is documented in ``docs/protocol-files.md``; :func:`load_protocol_file` validates a file and
returns an :class:`AuditPlan`.
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Mapping
from typing import Any, Final, Literal, cast, final

import attrs

from certify.claims import AnyClaim, Claim, GDPClaim, ProfileClaim, ZCDPClaim
from certify.errors import CertifyError

__all__ = [
    "AuditPlan",
    "BenchmarkPlan",
    "ProtocolFileError",
    "load_protocol_file",
    "parse_protocol",
]


class ProtocolFileError(ValueError, CertifyError):
    """A protocol file is unreadable or violates the schema (names the key, constraint and value)."""


_KINDS: Final = ("audit", "benchmark")


@final
@attrs.frozen
class AuditPlan:
    """A validated face-audit protocol (kind ``"audit"``).

    Attributes mirror the TOML keys; see ``docs/protocol-files.md``.
    """

    name: str
    confidence_level: float
    delta: float
    family_size: int | None
    label_column: str
    normalize: bool
    dev_fraction: float
    split_seed: int
    candidates: int
    pair_seed: int
    select: int
    disjoint: bool
    classifier: Literal["logistic"]
    C: float
    max_iter: int
    threshold: Literal["youden", "max_bound"] | float
    folds: int
    cv_seed: int
    claim_epsilon: float | None
    claim_delta: float
    description: str
    claim_gdp_mu: float | None = None
    claim_zcdp_rho: float | None = None
    claim_profile: tuple[tuple[float, float], ...] | None = None

    def claim(self) -> AnyClaim | None:
        """The claim the file states (at most one of its kinds), or None."""
        if self.claim_epsilon is not None:
            return Claim(self.claim_epsilon, self.claim_delta)
        if self.claim_gdp_mu is not None:
            return GDPClaim(self.claim_gdp_mu)
        if self.claim_zcdp_rho is not None:
            return ZCDPClaim(self.claim_zcdp_rho)
        if self.claim_profile is not None:
            return ProfileClaim.from_points(self.claim_profile, name="profile of the protocol file")
        return None


@final
@attrs.frozen
class BenchmarkPlan:
    """A validated known-epsilon benchmark protocol (kind ``"benchmark"``)."""

    name: str
    preset: str
    description: str
    settings: Mapping[str, Any] = attrs.field(eq=False)


def _where(section: str, key: str) -> str:
    """Dotted key name for messages."""
    return f"{section}.{key}" if section else key


def _get(
    table: Mapping[str, Any],
    section: str,
    key: str,
    kind: type | tuple[type, ...],
    default: Any = ...,
) -> Any:
    """Fetch a key, check its type, apply the default."""
    if key not in table:
        if default is ...:
            raise ProtocolFileError(f"{_where(section, key)} is required but missing.")
        return default
    value = table[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        raise ProtocolFileError(
            f"{_where(section, key)} must be of type {' or '.join(k.__name__ for k in kinds)}; got {value!r}."
        )
    if not isinstance(value, kinds):
        raise ProtocolFileError(
            f"{_where(section, key)} must be of type {' or '.join(k.__name__ for k in kinds)}; got {value!r}."
        )
    return value


def _finite(value: float) -> bool:
    """Whether a TOML number is finite as a float (an integer too large for a float is not)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _range(value: float, section: str, key: str, lo: float, hi: float, lo_open: bool, hi_open: bool) -> float:
    """Check a number lies in an interval."""
    ok = (
        _finite(value)
        and (value > lo if lo_open else value >= lo)
        and (value < hi if hi_open else value <= hi)
    )
    if not ok:
        interval = f"{'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}"
        raise ProtocolFileError(f"{_where(section, key)} must be in {interval}; got {value!r}.")
    return float(value)


def _unknown(table: Mapping[str, Any], section: str, allowed: set[str]) -> None:
    """Refuse keys outside the schema (a typo must not silently fall back to a default)."""
    for key in table:
        if key not in allowed:
            raise ProtocolFileError(
                f"{_where(section, key)} is not a known key; allowed keys in "
                f"[{section or 'top level'}]: {', '.join(sorted(allowed))}."
            )


def _section(doc: Mapping[str, Any], name: str, required: bool = True) -> Mapping[str, Any]:
    """A sub-table of the document."""
    if name not in doc:
        if required:
            raise ProtocolFileError(f"section [{name}] is required but missing.")
        return {}
    value = doc[name]
    if not isinstance(value, dict):
        raise ProtocolFileError(f"{name} must be a table ([{name}]); got {value!r}.")
    return value


def parse_protocol(doc: Mapping[str, Any]) -> AuditPlan | BenchmarkPlan:
    """Validate a parsed TOML document and return the plan it describes.

    Parameters
    ----------
    doc : Mapping
        The document as returned by ``tomllib.loads``.

    Returns
    -------
    AuditPlan or BenchmarkPlan

    Raises
    ------
    ProtocolFileError
        Naming the key, the constraint and the value.
    """
    _unknown(doc, "", {"kind", "protocol", "data", "pairs", "test", "claim", "benchmark"})
    kind = _get(doc, "", "kind", str, "audit")
    if kind not in _KINDS:
        raise ProtocolFileError(f"kind must be one of {', '.join(_KINDS)}; got {kind!r}.")
    proto = _section(doc, "protocol")
    _unknown(proto, "protocol", {"name", "description", "confidence_level", "delta", "family_size"})
    name = _get(proto, "protocol", "name", str)
    if not name.strip():
        raise ProtocolFileError("protocol.name must be a non-empty string; got ''.")
    description = _get(proto, "protocol", "description", str, "")
    if kind == "benchmark":
        bench = _section(doc, "benchmark")
        _unknown(
            bench,
            "benchmark",
            {
                "preset",
                "mechanisms",
                "epsilons",
                "n_samples",
                "repetitions",
                "prototypes",
                "routes",
                "pairs",
                "power_pairs",
                "power_repetitions",
            },
        )
        preset = _get(bench, "benchmark", "preset", str)
        if preset not in ("quick", "paper", "power", "custom"):
            raise ProtocolFileError(
                f"benchmark.preset must be one of quick, paper, power, custom; got {preset!r}."
            )
        return BenchmarkPlan(name=name, preset=preset, description=description, settings=dict(bench))
    level = _range(
        _get(proto, "protocol", "confidence_level", (int, float), 0.95),
        "protocol",
        "confidence_level",
        0.0,
        1.0,
        True,
        True,
    )
    delta = _range(
        _get(proto, "protocol", "delta", (int, float), 0.0), "protocol", "delta", 0.0, 1.0, False, True
    )
    family_size = _get(proto, "protocol", "family_size", int, None)
    if family_size is not None and family_size < 1:
        raise ProtocolFileError(f"protocol.family_size must be an integer >= 1; got {family_size!r}.")

    data = _section(doc, "data")
    _unknown(data, "data", {"label_column", "normalize", "dev_fraction", "split_seed"})
    label_column = _get(data, "data", "label_column", str, "identity")
    normalize = _get(data, "data", "normalize", bool, True)
    dev_fraction = _range(
        _get(data, "data", "dev_fraction", (int, float), 0.7), "data", "dev_fraction", 0.0, 1.0, True, True
    )
    split_seed = _get(data, "data", "split_seed", int, 0)
    if split_seed < 0:
        raise ProtocolFileError(f"data.split_seed must be an integer >= 0; got {split_seed!r}.")

    pairs = _section(doc, "pairs")
    _unknown(pairs, "pairs", {"candidates", "seed", "select", "disjoint"})
    candidates = _get(pairs, "pairs", "candidates", int, 100)
    select = _get(pairs, "pairs", "select", int, 5)
    for key, value in (("candidates", candidates), ("select", select)):
        if value < 1:
            raise ProtocolFileError(f"pairs.{key} must be an integer >= 1; got {value!r}.")
    if select > candidates:
        raise ProtocolFileError(
            f"pairs.select must be at most pairs.candidates ({candidates}); got {select!r}."
        )
    pair_seed = _get(pairs, "pairs", "seed", int, 0)
    if pair_seed < 0:
        raise ProtocolFileError(f"pairs.seed must be an integer >= 0; got {pair_seed!r}.")
    disjoint = _get(pairs, "pairs", "disjoint", bool, True)

    test = _section(doc, "test", required=False)
    _unknown(test, "test", {"classifier", "C", "max_iter", "threshold", "folds", "seed"})
    classifier = _get(test, "test", "classifier", str, "logistic")
    if classifier != "logistic":
        raise ProtocolFileError(f"test.classifier must be one of logistic; got {classifier!r}.")
    C = _range(_get(test, "test", "C", (int, float), 1.0), "test", "C", 0.0, math.inf, True, True)
    max_iter = _get(test, "test", "max_iter", int, 1000)
    if max_iter < 1:
        raise ProtocolFileError(f"test.max_iter must be an integer >= 1; got {max_iter!r}.")
    threshold = _get(test, "test", "threshold", (str, int, float), "youden")
    if isinstance(threshold, str) and threshold not in ("youden", "max_bound"):
        raise ProtocolFileError(
            f"test.threshold must be 'youden', 'max_bound' or a number; got {threshold!r}."
        )
    if not isinstance(threshold, str) and not _finite(threshold):
        raise ProtocolFileError(f"test.threshold must be finite; got {threshold!r}.")
    folds = _get(test, "test", "folds", int, 5)
    if folds < 2:
        raise ProtocolFileError(f"test.folds must be an integer >= 2; got {folds!r}.")
    cv_seed = _get(test, "test", "seed", int, 0)
    if cv_seed < 0:
        raise ProtocolFileError(f"test.seed must be an integer >= 0; got {cv_seed!r}.")

    claim = _section(doc, "claim", required=False)
    _unknown(claim, "claim", {"epsilon", "delta", "gdp_mu", "zcdp_rho", "profile"})
    claim_epsilon = _get(claim, "claim", "epsilon", (int, float), None)
    if claim_epsilon is not None:
        claim_epsilon = _range(claim_epsilon, "claim", "epsilon", 0.0, math.inf, False, True)
    if "delta" in claim and claim_epsilon is None:
        raise ProtocolFileError(
            "claim.delta belongs to a point claim: give claim.epsilon with it, or drop it."
        )
    claim_delta = _range(
        _get(claim, "claim", "delta", (int, float), delta), "claim", "delta", 0.0, 1.0, False, True
    )
    curves: dict[str, float | None] = {}
    for key in ("gdp_mu", "zcdp_rho"):
        value = _get(claim, "claim", key, (int, float), None)
        curves[key] = None if value is None else _range(value, "claim", key, 0.0, math.inf, True, True)
    profile = _profile_points(claim.get("profile"))
    stated = [k for k in ("epsilon", "gdp_mu", "zcdp_rho", "profile") if k in claim]
    if len(stated) > 1:
        raise ProtocolFileError(
            f"[claim] states one claim; got {', '.join('claim.' + k for k in stated)}. Keep one."
        )
    return AuditPlan(
        name=name,
        confidence_level=level,
        delta=delta,
        family_size=family_size,
        label_column=label_column,
        normalize=normalize,
        dev_fraction=dev_fraction,
        split_seed=split_seed,
        candidates=candidates,
        pair_seed=pair_seed,
        select=select,
        disjoint=disjoint,
        classifier="logistic",
        C=C,
        max_iter=max_iter,
        threshold=cast(Literal["youden", "max_bound"], threshold)
        if isinstance(threshold, str) else float(threshold),
        folds=folds,
        cv_seed=cv_seed,
        claim_epsilon=claim_epsilon,
        claim_delta=claim_delta,
        description=description,
        claim_gdp_mu=curves["gdp_mu"],
        claim_zcdp_rho=curves["zcdp_rho"],
        claim_profile=profile,
    )


def _profile_points(value: object) -> tuple[tuple[float, float], ...] | None:
    """``claim.profile``: a list of ``[epsilon, delta]`` points, validated."""
    if value is None:
        return None
    if not isinstance(value, list) or not value:
        raise ProtocolFileError(
            f"claim.profile must be a non-empty list of [epsilon, delta] points; got {value!r}."
        )
    points = []
    for k, point in enumerate(value):
        if (
            not isinstance(point, list)
            or len(point) != 2
            or any(isinstance(v, bool) or not isinstance(v, int | float) for v in point)
        ):
            raise ProtocolFileError(
                f"claim.profile[{k}] must be a pair [epsilon, delta] of numbers; got {point!r}."
            )
        e = _range(point[0], "claim", f"profile[{k}][0] (epsilon)", 0.0, math.inf, False, True)
        d = _range(point[1], "claim", f"profile[{k}][1] (delta)", 0.0, 1.0, False, False)
        points.append((e, d))
    return tuple(points)


def load_protocol_file(path: str | os.PathLike[str]) -> AuditPlan | BenchmarkPlan:
    r"""Read and validate a protocol TOML file.

    Parameters
    ----------
    path : str or PathLike
        The file.

    Returns
    -------
    AuditPlan or BenchmarkPlan

    Raises
    ------
    ProtocolFileError
        If the file cannot be read, is not TOML, or violates the schema.

    Examples
    --------
    >>> text = "\n".join(["[protocol]", 'name = "a"', "[data]", "[pairs]"])
    >>> plan = parse_protocol(tomllib.loads(text))
    >>> plan.dev_fraction, plan.select
    (0.7, 5)
    """
    try:
        with open(path, "rb") as fh:
            doc = tomllib.load(fh)
    except OSError as exc:
        raise ProtocolFileError(f"cannot read protocol file {os.fspath(path)!r}: {exc.strerror}.") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ProtocolFileError(f"protocol file {os.fspath(path)!r} is not valid TOML: {exc}.") from exc
    except UnicodeDecodeError as exc:
        raise ProtocolFileError(f"protocol file {os.fspath(path)!r} is not UTF-8 text.") from exc
    return parse_protocol(doc)
