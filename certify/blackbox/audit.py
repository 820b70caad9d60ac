"""Black-box audit of a callable mechanism: choose on development calls, certify on reserved calls.

:func:`audit_mechanism` spends a budget of mechanism calls in two stages. Development calls on
each candidate input pair choose everything: the pair, the test family, the orientation and the
threshold (:mod:`certify.blackbox.events`). The choice is registered in a
:class:`~certify.Protocol` and sealed against a :class:`~certify.data.stream.ReservedStream` of
fresh calls; the sealed protocol then makes the reserved calls once, streamed in seeded chunks,
and issues a :class:`~certify.CertificateFamily`.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, final

import attrs
import numpy as np
from numpy.typing import NDArray

from certify._core import Pair, check_confidence_level, check_delta, check_int
from certify.blackbox._development import Candidate, develop
from certify.blackbox.events import Choice, resolve_families
from certify.claims import AnyClaim, Claim, GDPClaim, Inconclusive, ProfileClaim, Refuted, ZCDPClaim, refute
from certify.data.draws import (
    FRESHNESS_BATCHES,
    FRESHNESS_CALLS,
    Mechanism,
    call_mechanism,
    canonical_input,
    check_calls,
    check_fresh_randomness,
    input_label,
    mechanism_identity,
    mechanism_name,
)
from certify.data.stream import Backend, ReservedStream
from certify.errors import ParameterError
from certify.plan import rate_level
from certify.protocol.fixed import FixedTest
from certify.protocol.ledger import Ledger, evaluation_share
from certify.protocol.lifecycle import Protocol
from certify.protocol.record import PreregistrationRecord
from certify.results import Certificate, CertificateFamily, Diagnostic

__all__ = ["MechanismAudit", "audit_mechanism", "default_ledger"]

MAX_SEED: Final = 2**63 - 1
"""Largest audit seed (the ledger records seeds as 64-bit integers)."""

DEV_ASSUMPTIONS: Final = (
    "computed on development calls only; the value predicts the certified bound of the chosen "
    "event and is no bound itself",
)


def default_ledger() -> Ledger:
    """The ledger used when none is given: ``$CERTIFY_LEDGER``, else a per-user file.

    The per-user file is ``$XDG_DATA_HOME/certify/mechanisms.ledger`` (by default
    ``~/.local/share/certify/mechanisms.ledger``). Keeping one ledger per user means that
    rerunning an audit with new seeds is counted even when no ledger is named.
    """
    path = os.environ.get("CERTIFY_LEDGER")
    if not path:
        base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
        path = str(Path(base) / "certify" / "mechanisms.ledger")
    return Ledger(path)


@final
@attrs.frozen
class MechanismAudit:
    """The outcome of :func:`audit_mechanism`.

    Attributes
    ----------
    mechanism : str
        The mechanism's readable name.
    identity : str
        The identity under which the ledger counts its evaluations.
    certificate : Certificate
        The certified lower bound on epsilon for the chosen input pair.
    family : CertificateFamily
        The family the certificate belongs to (one member).
    development : tuple of Diagnostic
        Every candidate (input pair and family) judged on development calls, best first.
    record : PreregistrationRecord
        The pre-registration record written at sealing.
    evaluation : int
        The number of this evaluation among the ledger's evaluations of the mechanism.
    confidence_level : float
        The level stated for the claim: all evaluations of this mechanism hold together at it.
    level_used : float
        This evaluation's own level, ``1 - (1 - confidence_level) * 6 / (pi^2 k^2)``.
    calls : int
        The budget: setup, development and reserved calls together.
    setup_calls : int
        Calls that check the mechanism before development, part of the budget: one for its
        output width and ``FRESHNESS_BATCHES * FRESHNESS_CALLS`` per distinct input for its use
        of ``rng`` (:func:`~certify.data.draws.check_fresh_randomness`).
    development_calls : int
        Calls spent on development (all candidate pairs).
    reserved_calls : Mapping[str, int]
        Reserved calls per input of the chosen pair (split as the chosen event favours).
    inputs : tuple of (str, str)
        The candidate input pairs (labels: compact JSON), in the order given.
    chosen : str
        The chosen event, e.g. ``"coordinate[0] >= 3.2"``.
    seconds : float
        Wall time of the whole audit.
    reserved_seconds : float
        Wall time of the reserved evaluation (the streamed calls and their counting).
    claim : Claim or GDPClaim or ZCDPClaim or ProfileClaim, optional
        The claim the development choice targeted (None: Eq. 16's epsilon at the certificate's
        delta).
    """

    mechanism: str
    identity: str
    certificate: Certificate
    family: CertificateFamily
    development: tuple[Diagnostic, ...]
    record: PreregistrationRecord
    evaluation: int
    confidence_level: float
    level_used: float
    calls: int
    setup_calls: int
    development_calls: int
    reserved_calls: Mapping[str, int]
    inputs: tuple[tuple[str, str], ...]
    chosen: str
    seconds: float
    reserved_seconds: float
    claim: AnyClaim | None = None

    @property
    def epsilon_lower(self) -> float:
        """The certificate's lower confidence bound on epsilon (at its delta)."""
        return self.certificate.epsilon_lower

    @property
    def verdict(self) -> Refuted | Inconclusive | None:
        """The targeted claim tested against the certificate (None without a claim)."""
        return None if self.claim is None else refute(self.claim, self.family)


def _progress(enabled: bool | Callable[[int, int], None]) -> Callable[[int, int], None] | None:
    """A progress callback: the caller's, a line-based one on stderr, or none."""
    if callable(enabled):
        return enabled
    if not enabled:
        return None
    from certify._progress import progress_callback

    return progress_callback("reserved calls")


def _development_note(enabled: bool | Callable[[int, int], None]) -> Callable[[int, int, str], None]:
    """A line on stderr at each development round's start, when progress is on (``True``)."""
    def note(r: int, rounds: int, what: str) -> None:
        if enabled is True:
            sys.stderr.write(f"development round {r}/{rounds}: {what}\n")
            sys.stderr.flush()

    return note


def audit_mechanism(
    mechanism: Mechanism,
    input_a: object = None,
    input_b: object = None,
    *,
    calls: int,
    inputs: Sequence[tuple[object, object]] | None = None,
    confidence_level: float = 0.95,
    delta: float | None = None,
    claim: AnyClaim | None = None,
    tests: str | Sequence[str] = "certify",
    seed: int = 0,
    ledger: Ledger | None = None,
    progress: bool | Callable[[int, int], None] = True,
    dev_fraction: float = 0.1,
    backend: Backend = "local",
    workers: int = 1,
    scheduler: str | None = None,
    name: str | None = None,
) -> MechanismAudit:
    """Certify a lower bound on a mechanism's epsilon from calls on neighbouring inputs.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(x, n, rng)`` returning ``n`` outputs for the input ``x`` (a 1-D numpy
        array), shape ``(n,)`` or ``(n, k)``, float, integer or boolean, drawing randomness only
        from the numpy ``Generator`` ``rng``. A suite mechanism
        (:data:`certify.blackbox.SUITE`) or any function.
    input_a, input_b : array_like, optional
        Two neighbouring inputs (numbers or 1-D lists of numbers).
    calls : int
        The whole budget of mechanism calls, development and reserved.
    inputs : sequence of (input_a, input_b), optional
        Several candidate pairs instead of ``input_a, input_b``; the pair is chosen on
        development calls by a race on held-out counts (a pair and its reverse race once, an
        input shared by several pairs is called once for all; see
        :func:`certify.blackbox._development.race`).
    confidence_level : float, default 0.95
        Level stated for the claim; every evaluation of this mechanism recorded in the ledger
        holds together at it (see Notes).
    delta : float, optional
        Delta at which the certificate states ``epsilon_lower``; default the claim's delta for a
        point claim, else 0.
    claim : Claim or GDPClaim or ZCDPClaim or ProfileClaim, optional
        The claim under test. Development then chooses the pair, event, threshold and reserved
        split to maximize what the certificate is expected to certify in the claim's terms:
        Eq. 16's epsilon at the claim's delta (``Claim``), ``mu_lower`` (``GDPClaim``),
        ``rho_lower`` (``ZCDPClaim``) or the margin over the profile (``ProfileClaim``);
        default Eq. 16's epsilon at ``delta``. The certificate is valid for every claim type
        whatever was targeted; targeting only spends the calls where they show the most.
    tests : "certify", "values", "paper" or sequence of str, default "certify"
        Test families to choose among (:data:`certify.blackbox.events.FAMILIES`); ``"values"``
        leaves out the families that read the outputs' floating-point representation (the
        mechanism's law in real arithmetic); ``"paper"`` is the logistic test alone.
    seed : int, default 0
        Seed of every call (development and reserved) and of randomized fits.
    ledger : Ledger, optional
        Records the pre-registration, spends the reserved stream and counts evaluations of the
        mechanism; default :func:`default_ledger`.
    progress : bool or callable, default True
        Progress of the reserved calls on stderr, or a callback ``(done, total)``.
    dev_fraction : float, default 0.1
        Development calls as a share of the budget (at least 1,000 calls per pair when the
        budget allows; capped so that one pair's development outputs fit in memory). One pair:
        all of it chooses the event. Several pairs: the chosen pair's round gets half of it and
        the race among the pairs the other half, or more, up to 30% of the budget, so that each
        input gets 10,000 calls in the first round. The chosen pair's round then grows, on fresh
        calls, while reserving that many fewer calls costs its best event under 0.5% of its
        expected bound (``EXTEND_COST``), up to a quarter of the budget: calls go to development
        where the bound is set by the event, and stay in the reserve where it is set by the
        width of the confidence bounds.
    backend : {"local", "dask"}, default "local"
        Where reserved calls run. ``"dask"`` splits them into seeded chunks on a Dask cluster;
        only counts travel back, and the certificate equals the local one.
    workers : int, default 1
        Local processes (or LocalCluster workers) for the reserved calls.
    scheduler : str, optional
        Dask scheduler address (``backend="dask"``); default a new LocalCluster.
    name : str, optional
        A readable name for reports; default the suite name or ``module:qualname``.

    Returns
    -------
    MechanismAudit

    Raises
    ------
    ParameterError
        On invalid settings, equal inputs, or a budget too small to leave reserved calls.
    MechanismError
        If the mechanism raises or returns outputs that cannot be audited (NaN, infinity, a
        wrong shape, another number of outputs than asked, non-numeric values). After sealing,
        the reserved stream stays spent and the ledger marks the evaluation failed.
    ReservedSplitReusedError
        If an earlier evaluation of the mechanism in ``ledger`` used ``seed`` (a rerun),
        checked before any call is made, or the same reserved calls were evaluated.

    Notes
    -----
    Reserved calls: their sum is fixed by the budget; the split between the two inputs is
    chosen on development calls (:func:`~certify.blackbox.events.split_reserved`), so an event
    one input almost never produces gets most calls on that input.

    Guarantee: with probability at least ``level_used`` over the reserved calls, the
    mechanism is not ``(epsilon, delta)``-DP for any ``epsilon < certificate.epsilon_lower``,
    provided each call draws fresh, independent randomness. The event was fixed on
    development calls before any reserved call was made; the two probabilities are bounded by
    one-sided Clopper-Pearson bounds (a union bound over the two) and combined by Eq. 16.

    Reruns: the ledger numbers every evaluation of a mechanism identity (any inputs, any
    seed). The ``k``-th spends ``(1 - confidence_level) * 6 / (pi^2 k^2)`` of the error budget,
    so all evaluations of the claim hold together at ``confidence_level``; rerunning with new
    seeds until one refutes cannot manufacture a refutation at the stated level. The first
    evaluation uses level ``1 - 0.608 (1 - confidence_level)``.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> def laplace(x, n, rng):
    ...     return x[0] + rng.laplace(0.0, 1.0, size=n)
    >>> ledger = Ledger(os.path.join(tempfile.mkdtemp(), "m.ledger"))
    >>> audit = audit_mechanism(laplace, 0.0, 1.0, calls=200_000, ledger=ledger, progress=False,
    ...                         tests="values")
    >>> 0.8 < audit.certificate.epsilon_lower <= 1.0
    True

    On doubles the same code leaks its input through the low bits of its outputs, which the
    default families read (docs/bugs.md):

    >>> audit = audit_mechanism(laplace, 0.0, 1.0, calls=200_000, ledger=ledger, progress=False,
    ...                         seed=1)
    >>> audit.certificate.epsilon_lower > 5.0, audit.chosen.startswith(("grain", "mantissa"))
    (True, True)
    """
    start = time.perf_counter()
    calls = check_calls(calls)
    confidence_level = check_confidence_level(confidence_level)
    if claim is not None and not isinstance(claim, Claim | GDPClaim | ZCDPClaim | ProfileClaim):
        raise ParameterError(
            f"claim must be a Claim, GDPClaim, ZCDPClaim or ProfileClaim; got {type(claim).__name__}."
        )
    if delta is None:
        delta = claim.delta if isinstance(claim, Claim) else 0.0
    delta = check_delta(delta)
    target = None if claim is None else claim.target()
    seed = check_int(seed, "seed", 0)
    if seed > MAX_SEED:
        raise ParameterError(
            f"seed must be an integer in [0, 2**63 - 1] (the ledger records it as a 64-bit "
            f"integer); got {seed!r}."
        )
    workers = check_int(workers, "workers", 1)
    families = resolve_families(tests)
    if isinstance(dev_fraction, bool) or not 0.0 < float(dev_fraction) < 1.0:
        raise ParameterError(f"dev_fraction must be a number in (0, 1); got {dev_fraction!r}.")
    if backend not in ("local", "dask"):
        raise ParameterError(f"backend must be 'local' or 'dask'; got {backend!r}.")
    if scheduler is not None and backend != "dask":
        raise ParameterError("scheduler is used only with backend='dask'.")
    if not callable(mechanism):
        raise ParameterError(f"mechanism must be callable as mechanism(x, n, rng); got {mechanism!r}.")
    pairs = _candidate_pairs(input_a, input_b, inputs)
    ledger = default_ledger() if ledger is None else ledger
    if not isinstance(ledger, Ledger):
        raise ParameterError(f"ledger must be a Ledger; got {type(ledger).__name__}.")
    identity = mechanism_identity(mechanism)
    readable = name or mechanism_name(mechanism)
    ledger.check_new_seed(identity, seed)  # a rerun is refused before it costs anything
    earlier = len(ledger.evaluations(identity))
    alpha_plan = rate_level((1.0 - confidence_level) * evaluation_share(earlier + 1))

    # -- development: every choice, on calls that are never reused --------------------------
    distinct = {label: x for pair in pairs for label, x in pair}
    setup = 1 + FRESHNESS_BATCHES * FRESHNESS_CALLS * len(distinct)
    if calls - setup < 2:
        raise ParameterError(
            f"calls={calls} leaves no reserved calls after the {setup} calls that check the "
            "mechanism before development; give a larger budget (at least a few thousand calls)."
        )
    root = np.random.SeedSequence(seed)
    probe = call_mechanism(
        mechanism, pairs[0][0][1], 1, np.random.default_rng(root.spawn(1)[0]), name=readable,
        label=pairs[0][0][0], width=None,
    )
    width = probe.shape[1]
    check_fresh_randomness(mechanism, list(distinct.items()), name=readable, width=width, seed=seed)
    dev = develop(
        mechanism, pairs, calls=calls - setup, seed=seed, width=width, name=readable, families=families,
        dev_fraction=float(dev_fraction), alpha_per_rate=alpha_plan, delta=delta, target=target,
        note=_development_note(progress),
    )
    best = dev.found[0]
    (la, xa), (lb, xb) = pairs[dev.pair]
    reserved_a, reserved_b = dev.reserved
    dev_fingerprint = _dev_fingerprint(identity, pairs, seed, calls, dev.per_round)
    test = FixedTest(
        pair=Pair(la, lb),
        model=best.model,
        threshold=best.threshold,
        orientation=best.orientation,
        development_fingerprint=dev_fingerprint,
        name=best.label,
        development_auc=best.auc,
    )
    unit = "epsilon" if target is None else target.unit
    shown = [(dev.pair, dev.chosen_calls, c, None) for c in dev.found] + [
        (p, n, c, None) for p, c, n in dev.finalists[1:]
    ] + [
        (dev.raced[c.pair], c.calls, c.choice, c)
        for c in sorted(dev.shown, key=lambda c: (c.round, c.key), reverse=True)
        if c.choice is not None
    ]
    diagnostics = tuple(_diagnostic(pairs[p], c, n, unit, raced) for p, n, c, raced in shown)

    # -- sealing and the one reserved evaluation ---------------------------------------------
    stream = ReservedStream.create(
        mechanism,
        {la: xa, lb: xb},
        {la: reserved_a, lb: reserved_b},
        identity=identity,
        name=readable,
        seed=seed,
        calls=calls,
        width=width,
        development_fingerprint=dev_fingerprint,
    )
    protocol = Protocol(
        name=f"mechanism:{readable}",
        confidence_level=confidence_level,
        delta=delta,
        annotations={
            "candidate_pairs": [[a[0], b[0]] for a, b in pairs],
            "raced_pairs": [[pairs[p][0][0], pairs[p][1][0]] for p in dev.raced],
            "setup_calls": setup,
            "development_calls_per_input_by_round": dev.per_round,
            "chosen_pair_development_calls_per_input": dev.chosen_calls,
            "final_round": [
                {"pair": [pairs[p][0][0], pairs[p][1][0]], "test": c.label, "value": c.value,
                 "calls_per_input": n}
                for p, c, n in dev.finalists
            ],
            "checked_on_fresh_calls": {
                "calls_per_input": dev.check_calls,
                "tests": [
                    {"test": c.label, "threshold": c.threshold, "value": c.value, "held_out": v}
                    for c, v in dev.checked
                ],
            },
            "reserved_split": [reserved_a, reserved_b],
            "families": list(families),
            "claim": None if claim is None else claim.describe(),
            "target": "epsilon" if target is None else target.kind,
            "development": [
                {"pair": [pairs[p][0][0], pairs[p][1][0]], "test": c.label, "value": c.value,
                 "plug_in": c.plug_in, "auc": c.auc, "calls_per_input": n,
                 **({} if raced is None else {"round": raced.round + 1, "held_out": raced.held_out})}
                for p, n, c, raced in shown[:50]
            ],
        },
    )
    protocol.register(test)
    sealed = protocol.seal(stream, ledger)
    reserved_start = time.perf_counter()
    family = sealed.evaluate(
        backend=backend, workers=workers, scheduler=scheduler, progress=_progress(progress)
    )
    reserved_seconds = time.perf_counter() - reserved_start
    proto = sealed.record.content["protocol"]
    op = ">=" if best.orientation > 0 else "<="
    return MechanismAudit(
        mechanism=readable,
        identity=identity,
        certificate=family.certificates[0],
        family=family,
        development=diagnostics,
        record=sealed.record,
        evaluation=int(proto["evaluation"]),
        confidence_level=confidence_level,
        level_used=float(proto["level_used"]),
        calls=calls,
        setup_calls=setup,
        development_calls=dev.development_calls,
        reserved_calls={la: reserved_a, lb: reserved_b},
        inputs=tuple((a[0], b[0]) for a, b in pairs),
        chosen=f"{best.label} {op} {best.threshold:.6g}",
        seconds=time.perf_counter() - start,
        reserved_seconds=reserved_seconds,
        claim=claim,
    )


def _candidate_pairs(
    input_a: object, input_b: object, inputs: Sequence[tuple[object, object]] | None
) -> list[tuple[tuple[str, NDArray[Any]], tuple[str, NDArray[Any]]]]:
    """Labelled, validated candidate input pairs."""
    if inputs is None:
        if input_a is None or input_b is None:
            raise ParameterError(
                "give two neighbouring inputs (input_a, input_b) or a list inputs=[(a, b), ...]."
            )
        raw: list[Any] = [(input_a, input_b)]
    else:
        if input_a is not None or input_b is not None:
            raise ParameterError("give either input_a and input_b or inputs=[...], not both.")
        raw = list(inputs)
        if not raw:
            raise ParameterError("inputs must hold at least one pair (a, b).")
    out = []
    seen: set[tuple[str, str]] = set()
    for k, pair in enumerate(raw):
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise ParameterError(f"inputs[{k}] must be a pair (a, b); got {pair!r:.80}.")
        xa = canonical_input(pair[0], f"inputs[{k}][0]" if inputs is not None else "input_a")
        xb = canonical_input(pair[1], f"inputs[{k}][1]" if inputs is not None else "input_b")
        la, lb = input_label(xa), input_label(xb)
        if xa.shape != xb.shape:
            raise ParameterError(
                f"the two inputs of a pair must have one length; got {xa.size} and {xb.size}."
            )
        if la == lb or bool(np.all(xa == xb)):  # [1, 1, 1] and [1.0, 1.0, 1.0] are one input
            raise ParameterError(
                f"the two inputs of a pair must differ; got {la} and {lb}, which hold the same "
                "values. Neighbouring inputs differ in one record."
            )
        if (la, lb) not in seen:
            seen.add((la, lb))
            out.append(((la, xa), (lb, xb)))
    return out


def _dev_fingerprint(
    identity: str,
    pairs: Sequence[tuple[tuple[str, NDArray[Any]], tuple[str, NDArray[Any]]]],
    seed: int,
    calls: int,
    dev_n: Sequence[int],
) -> str:
    """Fingerprint of the development calls: a function of exactly these settings."""
    import hashlib

    content = json.dumps(
        {
            "format": "certify.development-calls.v1",
            "identity": identity,
            "pairs": [[a[0], b[0]] for a, b in pairs],
            "seed": seed,
            "calls": calls,
            "per_input": list(dev_n),
        },
        sort_keys=True,
    )
    return hashlib.sha256(content.encode()).hexdigest()


def _diagnostic(
    pair: tuple[tuple[str, NDArray[Any]], tuple[str, NDArray[Any]]],
    choice: Choice,
    dev_n: int,
    unit: str = "epsilon",
    raced: Candidate | None = None,
) -> Diagnostic:
    """A development candidate as a Diagnostic (a ranking score, no DP meaning).

    The chosen pair's events score their pessimistic development value; a pair's showing in a
    screening round scores its event's plug-in value on that round's fresh calls.
    """
    what = "Eq. 16" if unit == "epsilon" else f"the certified {unit}"
    details: dict[str, Any] = {
        "plug_in": choice.plug_in,
        "auc": choice.auc,
        "orientation": choice.orientation,
        "threshold": choice.threshold,
    }
    if raced is not None:
        details.update(round=raced.round + 1, held_out_plug_in=raced.plug_in)
    return Diagnostic(
        method="mechanism_development",
        score=choice.value if raced is None else raced.held_out,
        pair=Pair(pair[0][0], pair[1][0]),
        assumptions=DEV_ASSUMPTIONS,
        equation=(f"{what} at pessimistic development rates" if raced is None
                  else f"{what} at plug-in rates of held-out development calls"),
        n_samples=(dev_n, dev_n),
        parameters={"test": choice.label, "family": choice.family, "unit": unit},
        details=details,
    )
