"""The protocol lifecycle (paper Sec. 5.3, 6.5): draft -> sealed -> evaluated once.

A draft :class:`Protocol` collects fixed tests, each fitted on development data only;
:meth:`Protocol.seal` checks them against the reserved split, fixes the error allocation and
writes a JSON pre-registration record to the :class:`~certify.Ledger`;
:meth:`SealedProtocol.evaluate` marks the reserved split spent in the ledger, then reads its rows
once and issues a :class:`~certify.CertificateFamily`.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import uuid
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeAlias, final

import attrs

from certify._core import check_confidence_level, check_delta, check_int, check_text
from certify._token import ISSUER
from certify.data import DevTestSplit, EmbeddingTable, ReservedSplit
from certify.data.stream import Backend, ReservedStream
from certify.errors import (
    CertifyError,
    EstimatorError,
    ParameterError,
    ProtocolError,
    ProtocolSealedError,
    RecordError,
    ReservedSplitReusedError,
)
from certify.plan import alpha_of_test, alpha_per_rate, rate_level
from certify.protocol.fixed import FixedTest
from certify.protocol.ledger import Ledger, evaluation_share
from certify.protocol.mmd import MMD_ASSUMPTIONS, MMDTest
from certify.protocol.record import (
    RECORD_FORMAT,
    RECORD_VERSION,
    PreregistrationRecord,
    _canonical,
    _versions,
)
from certify.protocol.scores import ScoreFunction
from certify.results import Certificate, CertificateFamily, ErrorRateEvidence, LedgerStamp, MMDEvidence
from certify.stats.binomial import clopper_pearson_upper
from certify.stats.mmd import mmd_lower_confidence_bound

__all__ = [
    "CERTIFICATE_ASSUMPTIONS",
    "MECHANISM_ASSUMPTIONS",
    "Protocol",
    "RegisteredTest",
    "SealedProtocol",
]

CERTIFICATE_ASSUMPTIONS: Final = (
    "the reserved rows of each identity are iid draws from that identity's output distribution",
    "the reserved rows were used for no choice: pairs, classifier, orientation and threshold "
    "were fixed on development data and recorded before evaluation",
    "the two error rates of a test are counted on disjoint, independent reserved rows and each "
    "is bounded at alpha_per_rate, so both hold with probability (1 - alpha_per_rate)^2; the "
    "tests of the family hold together by a union (Bonferroni) bound",
)

MECHANISM_ASSUMPTIONS: Final = (
    "each call of the mechanism draws fresh randomness: outputs of reserved calls on each input "
    "are iid and independent of every development call",
    "the reserved calls were made only after sealing, once; the event (score, orientation, "
    "threshold) and the input pair were fixed on development calls and recorded before",
    "the two error rates of a test are counted on separate, independent reserved calls and each "
    "is bounded at alpha_per_rate, so both hold with probability (1 - alpha_per_rate)^2; the "
    "tests of the family hold together by a union (Bonferroni) bound",
    "this evaluation spends the share 6 / (pi^2 k^2) of the claim's error budget (k-th "
    "evaluation of this mechanism in the ledger), so all its evaluations hold together",
)

RegisteredTest: TypeAlias = FixedTest | MMDTest
"""Anything a protocol can register: a fixed decision rule or an MMD statistic with a fixed kernel."""

_SPENT_IN_PROCESS: set[str] = set()




@final
class Protocol:
    """A draft pre-registration: register fixed tests, then seal against a reserved split.

    Parameters
    ----------
    name : str
        A name for records and reports.
    confidence_level : float, default 0.95
        Simultaneous confidence level of the whole family of certificates.
    delta : float, default 0.0
        The delta at which certificates state ``epsilon_lower``.
    family_size : int, optional
        Number of tests the Bonferroni correction covers; default (and minimum) the number of
        registered tests. Use it when this protocol is one of several in a stated family
        (paper Sec. 5.3 corrects over 8 conditions x 5 pairs).
    annotations : Mapping, optional
        JSON-serializable facts to keep in the record (e.g. candidate pairs, the protocol file).

    Raises
    ------
    ParameterError
        If a setting is out of range.

    Notes
    -----
    Each test gets the share ``(1 - confidence_level) / family_size`` of the error budget (union
    bound over tests). Its two error rates are counted on disjoint reserved rows (``pair.a`` and
    ``pair.b``), independent under the iid model, so each is bounded one-sided at
    ``alpha_per_rate = 1 - sqrt(1 - share)`` (:func:`certify.plan.alpha_per_rate`): both hold
    with probability ``(1 - alpha_per_rate)^2 = 1 - share``, and all bounds of the family hold
    together with probability at least ``confidence_level``.

    Examples
    --------
    >>> p = Protocol(name="audit", confidence_level=0.95, delta=0.0)
    >>> p.tests
    ()
    """

    __slots__ = ("_sealed", "_tests", "annotations", "confidence_level", "delta", "family_size", "name")

    def __init__(
        self,
        name: str,
        confidence_level: float = 0.95,
        delta: float = 0.0,
        family_size: int | None = None,
        annotations: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = check_text(name, "name")
        try:
            self.annotations: dict[str, Any] = json.loads(
                json.dumps(dict(annotations or {}), allow_nan=False)
            )
        except (TypeError, ValueError) as exc:
            raise ParameterError(f"annotations must be JSON-serializable, finite data ({exc}).") from exc
        self.confidence_level = check_confidence_level(confidence_level)
        self.delta = check_delta(delta)
        self.family_size = None if family_size is None else check_int(family_size, "family_size", 1)
        self._tests: list[RegisteredTest] = []
        self._sealed = False

    @property
    def tests(self) -> tuple[RegisteredTest, ...]:
        """The registered tests, in order."""
        return tuple(self._tests)

    def register(self, test: RegisteredTest) -> None:
        """Add a fixed test (a decision rule, or an MMD statistic with a fixed kernel).

        Raises
        ------
        ProtocolSealedError
            If the protocol was sealed.
        ProtocolError
            If ``test`` is not a FixedTest or MMDTest, or the same pair and test name is already
            registered.
        """
        if self._sealed:
            raise ProtocolSealedError(
                f"protocol {self.name!r} is sealed; it can no longer change. Start a new Protocol "
                "for new tests (and reserve fresh data for them)."
            )
        if not isinstance(test, FixedTest | MMDTest):
            raise ProtocolError(
                f"only a FixedTest or MMDTest can be registered; got {type(test).__name__}. Build "
                "one with FixedTest.fit(estimator, split.development, pair)."
            )
        for t in self._tests:
            if t.pair == test.pair and t.name == test.name:
                raise ProtocolError(
                    f"a test named {test.name!r} for pair {test.pair} is already registered."
                )
        self._tests.append(test)

    def seal(self, reserved: ReservedSplit | ReservedStream, ledger: Ledger) -> SealedProtocol:
        """Check the tests against the reserved data, fix the alpha allocation, record, seal.

        Parameters
        ----------
        reserved : ReservedSplit or ReservedStream
            The reserved part of the split whose development part the tests were fitted on, or
            the reserved calls of a mechanism whose development draws they were chosen on.
        ledger : Ledger
            Where the pre-registration is recorded and the split will be marked spent.

        Returns
        -------
        SealedProtocol

        Raises
        ------
        ProtocolError
            If no test is registered, a test was fitted on other data, or a pair's identity has
            no reserved rows.
        ReservedSplitReusedError
            If the reserved split was already spent.
        ProtocolSealedError
            If this draft was sealed before.

        Notes
        -----
        Sealing a :class:`~certify.data.stream.ReservedStream` also numbers the evaluation in the
        ledger: the ``k``-th evaluation of a mechanism identity spends ``(1 - confidence_level)
        * 6 / (pi^2 k^2)`` (:func:`~certify.protocol.ledger.evaluation_share`), so every
        evaluation of the same claim holds together at ``confidence_level``, however often it
        is rerun with new seeds.
        """
        if self._sealed:
            raise ProtocolSealedError(f"protocol {self.name!r} is already sealed.")
        if isinstance(reserved, DevTestSplit):
            raise ProtocolError("pass split.reserved to seal, not the whole split.")
        if not isinstance(reserved, ReservedSplit | ReservedStream):
            raise ProtocolError(
                f"reserved must be a ReservedSplit or ReservedStream; got {type(reserved).__name__}."
            )
        if not isinstance(ledger, Ledger):
            raise ProtocolError(f"ledger must be a Ledger; got {type(ledger).__name__}.")
        if not self._tests:
            raise ProtocolError("register at least one FixedTest before sealing.")
        for t in self._tests:
            if t.development_fingerprint != reserved.development_fingerprint:
                raise ProtocolError(
                    f"the test for pair {t.pair} was fitted on other data (development "
                    f"fingerprint {t.development_fingerprint[:12]}, but this reserved split's "
                    f"development sibling is {reserved.development_fingerprint[:12]}). Fit the "
                    "test on split.development of this very split."
                )
            for ident in t.pair.as_tuple():
                if ident not in reserved.counts:
                    raise ProtocolError(f"identity {ident!r} has no rows in the reserved split.")
            if isinstance(reserved, ReservedStream) and isinstance(t, MMDTest):
                raise ProtocolError(
                    "an MMDTest needs reserved rows; a mechanism's reserved stream keeps only the "
                    "counts of fixed tests. Register FixedTest objects."
                )
        _check_unspent(reserved, ledger)
        n_tests = len(self._tests)
        family = n_tests if self.family_size is None else max(n_tests, self.family_size)
        pairs = sorted({i for t in self._tests for i in t.pair.as_tuple()})
        protocol_section: dict[str, Any] = {
            "name": self.name,
            "confidence_level": self.confidence_level,
            "delta": self.delta,
            "n_tests": n_tests,
            "family_size": family,
        }
        data: dict[str, Any]
        if isinstance(reserved, ReservedStream):
            slot = ledger.reserve_evaluation(
                reserved.mechanism_identity,
                reserved.fingerprint,
                json.dumps([[t.pair.a, t.pair.b] for t in self._tests]),
                reserved.seed,
                reserved.calls,
                self.confidence_level,
            )
            protocol_section["evaluation"] = slot.evaluation
            protocol_section["level_used"] = 1.0 - slot.alpha_spent
            protocol_section["alpha_per_rate"] = rate_level(slot.alpha_spent / family)
            data = reserved.record_data()
            data["reserved_counts"] = {k: reserved.counts[k] for k in pairs}
        else:
            protocol_section["alpha_per_rate"] = alpha_per_rate(family, self.confidence_level)
            data = {
                "table_fingerprint": reserved.table_fingerprint,
                "development_fingerprint": reserved.development_fingerprint,
                "reserved_fingerprint": reserved.fingerprint,
                "dev_fraction": reserved.dev_fraction,
                "seed": reserved.seed,
                "reserved_counts": {k: reserved.counts[k] for k in pairs},
                **reserved._sketches(),
            }
        content: dict[str, Any] = {
            "format": RECORD_FORMAT,
            "version": RECORD_VERSION,
            "protocol": protocol_section,
            "data": data,
            "tests": [t.to_json() for t in self._tests],
            "annotations": self.annotations,
            "ledger": ledger.head(),
            "library": _versions(),
            "sealed_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "nonce": uuid.uuid4().hex,
        }
        record = PreregistrationRecord._create(content)
        ledger.record_preregistration(
            record.sha256, self.name, reserved.fingerprint, record.to_json()
        )
        self._sealed = True
        return SealedProtocol._create(record, tuple(self._tests), reserved, ledger)

    def __repr__(self) -> str:
        state = "sealed" if self._sealed else "draft"
        return f"Protocol({self.name!r}, {len(self._tests)} tests, {state})"


def _check_unspent(reserved: ReservedSplit | ReservedStream, ledger: Ledger) -> None:
    """Raise ReservedSplitReusedError if the data are known to be spent."""
    ledger.check_unspent(reserved.fingerprint, reserved._row_keys())
    if reserved.spent or reserved.fingerprint in _SPENT_IN_PROCESS:
        raise ReservedSplitReusedError(
            f"reserved split {reserved.fingerprint[:12]} was already evaluated in this process "
            "(with another ledger). A reserved split can be evaluated once, ever."
        )


@final
class SealedProtocol:
    """A sealed protocol: its record is fixed; :meth:`evaluate` may run once.

    Obtain one from :meth:`Protocol.seal` or, in another process, from :meth:`from_record`.
    It cannot be pickled (a copy would be a second chance); ``copy.copy`` returns itself.

    Attributes
    ----------
    record : PreregistrationRecord
        The pre-registration record written at sealing.
    tests : tuple of FixedTest
        The registered tests.
    ledger : Ledger
        The ledger that recorded the seal.
    """

    __slots__ = ("_evaluated", "_reserved", "ledger", "record", "tests")

    record: PreregistrationRecord
    tests: tuple[RegisteredTest, ...]
    ledger: Ledger
    _reserved: ReservedSplit | ReservedStream
    _evaluated: bool

    def __init__(self) -> None:
        raise ProtocolError(
            "a SealedProtocol comes from Protocol.seal(...) or SealedProtocol.from_record(...)."
        )

    @classmethod
    def _create(
        cls,
        record: PreregistrationRecord,
        tests: tuple[RegisteredTest, ...],
        reserved: ReservedSplit | ReservedStream,
        ledger: Ledger,
    ) -> SealedProtocol:
        """Internal constructor."""
        self = object.__new__(cls)
        self.record = record
        self.tests = tests
        self.ledger = ledger
        self._reserved = reserved
        self._evaluated = False
        return self

    @classmethod
    def from_record(
        cls,
        record: PreregistrationRecord | str,
        table: EmbeddingTable,
        ledger: Ledger,
        *,
        score_functions: Mapping[str, ScoreFunction] | None = None,
    ) -> SealedProtocol:
        """Rebuild a sealed protocol from its record, the full table and the sealing ledger.

        Parameters
        ----------
        record : PreregistrationRecord or str
            The record, or its JSON text (its hash is checked).
        table : EmbeddingTable
            The same table the split was made from; the split is rebuilt from the recorded
            ``dev_fraction`` and ``seed`` and its fingerprints are checked.
        ledger : Ledger
            The ledger that recorded the seal.
        score_functions : Mapping[str, callable], optional
            Score functions for tests recorded as ``"function"``.

        Returns
        -------
        SealedProtocol

        Raises
        ------
        RecordError
            If the record was edited, belongs to another table, or was not sealed in ``ledger``.
        """
        rec = (
            record
            if isinstance(record, PreregistrationRecord)
            else PreregistrationRecord.from_json(record)
        )
        data = rec.content["data"]
        if data.get("kind") == "mechanism":
            raise RecordError(
                f"record {rec.sha256[:12]} seals a mechanism audit of {data['mechanism']!r}; its "
                "reserved calls are made by the audit that sealed it (certify.audit_mechanism) "
                "and cannot be rebuilt from a table."
            )
        if table.fingerprint != data["table_fingerprint"]:
            raise RecordError(
                f"this record belongs to another table (record {data['table_fingerprint'][:12]}, "
                f"given {table.fingerprint[:12]}). Pass the table the protocol was sealed on."
            )
        split = table.split(data["dev_fraction"], data["seed"])
        if (
            split.reserved.fingerprint != data["reserved_fingerprint"]
            or split.reserved.development_fingerprint != data["development_fingerprint"]
        ):
            raise RecordError(
                "rebuilding the split from the record does not reproduce its fingerprints; the "
                "table or the library's split changed."
            )
        if ledger.preregistration(rec.sha256) is None:
            raise RecordError(
                f"record {rec.sha256[:12]} was not sealed in the ledger {str(ledger.path)!r}. "
                "Evaluate with the ledger that recorded the seal."
            )
        check_sealing_ledger(rec, ledger)
        tests = tuple(
            MMDTest.from_json(t) if t.get("kind") == "mmd" else FixedTest.from_json(t, score_functions)
            for t in rec.content["tests"]
        )
        derived_levels(rec, tests, ledger)
        return cls._create(rec, tests, split.reserved, ledger)

    @property
    def reserved_fingerprint(self) -> str:
        """Fingerprint of the reserved split this protocol evaluates."""
        return self._reserved.fingerprint

    def evaluate(
        self,
        *,
        backend: Backend = "local",
        workers: int = 1,
        scheduler: str | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> CertificateFamily:
        """Spend the reserved data and evaluate every fixed test on it, once.

        Parameters
        ----------
        backend : {"local", "dask"}, default "local"
            Where a mechanism's reserved calls run (ignored for a reserved split).
        workers : int, default 1
            Local processes (or LocalCluster workers) making reserved calls.
        scheduler : str, optional
            Dask scheduler address; default a new LocalCluster.
        progress : callable, optional
            Receives ``(calls done, calls in all)`` while reserved calls are made.

        Returns
        -------
        CertificateFamily
            One certificate per registered test, holding simultaneously at the protocol's
            confidence level (for a mechanism: the level this evaluation uses, see Notes of
            :meth:`Protocol.seal`).

        Raises
        ------
        ReservedSplitReusedError
            If this reserved split was evaluated before, by this or any protocol, in this or any
            process using the same ledger. The message names who spent it and when.
        LedgerError
            If the ledger cannot be written; no reserved row has been read then.
        RecordError
            If ``record.content`` was changed after sealing; nothing is read or spent then.
        MechanismError, EstimatorError
            If the mechanism or a score function fails while the reserved data are evaluated;
            the reserved data stay spent and the ledger marks the evaluation failed.

        Notes
        -----
        The reserved data are marked spent in a committed ledger transaction before any row is
        read or any reserved call is made, so a crash during evaluation leaves them spent. For
        each test, rows (or calls) of ``pair.a`` give the false-positive count and those of
        ``pair.b`` the false-negative count; each rate gets a one-sided Clopper-Pearson upper
        bound at ``alpha_per_rate`` and Eq. 16 turns the two bounds into ``epsilon_lower``.
        """
        if self._evaluated:
            raise ReservedSplitReusedError(
                f"this sealed protocol ({self.record.protocol_name!r}) was already evaluated; a "
                "reserved split can be evaluated once, ever."
            )
        if hashlib.sha256(_canonical(self.record.content).encode()).hexdigest() != self.record.sha256:
            raise RecordError(
                "the pre-registration record was changed after sealing (its SHA-256 no longer "
                "matches its content); nothing was read from the reserved split."
            )
        check_int(workers, "workers", 1)
        if backend not in ("local", "dask"):
            raise ParameterError(f"backend must be 'local' or 'dask'; got {backend!r}.")
        level, alpha = derived_levels(self.record, self.tests, self.ledger)
        _check_unspent(self._reserved, self.ledger)
        name = self.record.protocol_name
        entry = self.ledger.spend(
            self._reserved.fingerprint, self.record.sha256, name, self._reserved._row_keys(),
            self._reserved._development_keys(),
        )
        self._evaluated = True
        self._reserved._mark_spent()
        _SPENT_IN_PROCESS.add(self._reserved.fingerprint)
        stamp = LedgerStamp(
            ledger_id=entry.ledger_id, sequence=entry.sequence, head=entry.head,
            evaluation=entry.evaluation,
        )
        try:
            certs = self._certificates(level, alpha, stamp, backend, workers, scheduler, progress)
        except BaseException as exc:
            self.ledger.fail(self._reserved.fingerprint, f"{type(exc).__name__}: {exc}")
            if isinstance(exc, CertifyError) or not isinstance(exc, Exception):
                raise
            raise EstimatorError(
                f"evaluation failed after the reserved data were spent: {type(exc).__name__}: "
                f"{exc}. The ledger marks this evaluation failed; the reserved data stay spent."
            ) from exc
        family = CertificateFamily(
            certificates=(*certs,),
            confidence_level=level,
            family_id=f"{name}-{self.record.sha256[:12]}",
            sources=(self.record.sha256,),
            protocol_name=name,
            _issuer=ISSUER,
        )
        self.ledger.complete(self._reserved.fingerprint, _outcome_json(family))
        return family

    def _certificates(
        self,
        level: float,
        alpha: float,
        stamp: LedgerStamp,
        backend: Backend,
        workers: int,
        scheduler: str | None,
        progress: Callable[[int, int], None] | None,
    ) -> list[Certificate]:
        """Evaluate every registered test on the (already spent) reserved data.

        ``level`` and ``alpha`` are the family's level and each rate's one-sided level, as
        :func:`derived_levels` recomputed them from the record and the ledger.
        """
        proto = self.record.content["protocol"]
        delta = float(proto["delta"])
        family_id = f"{self.record.protocol_name}-{self.record.sha256[:12]}"
        reserved = self._reserved
        common: dict[str, Any] = {
            "delta": delta,
            "confidence_level": level,
            "family_id": family_id,
            "alpha_per_rate": alpha,
            "protocol_fingerprint": self.record.sha256,
            "data_fingerprint": reserved.fingerprint,
            "ledger": stamp,
            "_issuer": ISSUER,
        }
        if isinstance(reserved, ReservedStream):
            fixed = [t for t in self.tests if isinstance(t, FixedTest)]
            ones = reserved._count(
                [t.predict for t in fixed], backend=backend, workers=workers,
                scheduler=scheduler, progress=progress,
            )
            certs: list[Certificate] = []
            for k, rule in enumerate(fixed):
                n0, n1 = reserved.counts[rule.pair.a], reserved.counts[rule.pair.b]
                evidence = _rate_evidence(
                    int(ones[rule.pair.a][k]), n0, n1 - int(ones[rule.pair.b][k]), n1, alpha
                )
                certs.append(
                    Certificate(
                        method="mechanism_reserved", test_name=rule.name, pair=rule.pair,
                        epsilon_lower=evidence.epsilon_lower_at(delta), evidence=evidence,
                        assumptions=MECHANISM_ASSUMPTIONS, **common,
                    )
                )
            return certs
        certs = []
        for test in self.tests:
            rows_a = reserved._take(test.pair.a)
            rows_b = reserved._take(test.pair.b)
            if isinstance(test, MMDTest):
                bound = mmd_lower_confidence_bound(rows_a, rows_b, test.bandwidth, alpha_of_test(alpha))
                mmd = MMDEvidence(
                    mmd_biased=bound.mmd_biased,
                    slack=bound.slack,
                    mmd_lower=bound.lower,
                    bandwidth=test.bandwidth,
                    n_class0=len(rows_a),
                    n_class1=len(rows_b),
                    alpha=alpha_of_test(alpha),
                )
                certs.append(
                    Certificate(
                        method="mmd_reserved", test_name=test.name, pair=test.pair,
                        epsilon_lower=mmd.epsilon_lower_at(delta), evidence=mmd,
                        assumptions=MMD_ASSUMPTIONS,
                        equation="Eq. 14 and Sec. 4.3 (Gretton et al. 2012, Thm 7)", **common,
                    )
                )
                continue
            fp = int(test.predict(rows_a).sum())
            fn = int((~test.predict(rows_b)).sum())
            evidence = _rate_evidence(fp, len(rows_a), fn, len(rows_b), alpha)
            certs.append(
                Certificate(
                    method="roc_reserved", test_name=test.name, pair=test.pair,
                    epsilon_lower=evidence.epsilon_lower_at(delta), evidence=evidence,
                    assumptions=CERTIFICATE_ASSUMPTIONS, **common,
                )
            )
        return certs

    def __reduce__(self) -> tuple[object, ...]:
        raise ProtocolError(
            "a SealedProtocol cannot be pickled: a copy would be a second chance to evaluate. "
            "Save sealed.record.to_json() and rebuild with SealedProtocol.from_record(...)."
        )

    def __copy__(self) -> SealedProtocol:
        return self

    def __deepcopy__(self, memo: object) -> SealedProtocol:
        return self

    def __repr__(self) -> str:
        state = "evaluated" if self._evaluated else "sealed"
        return f"SealedProtocol({self.record.protocol_name!r}, {len(self.tests)} tests, {state})"


def check_sealing_ledger(record: PreregistrationRecord, ledger: Ledger) -> None:
    """Raise RecordError unless ``ledger`` holds the ledger state the record says it was sealed on.

    A record states the ledger's identity, its number of entries and its last hash at sealing
    (its ``ledger`` section, hashed with the rest of the record); that state must be a prefix
    of this ledger's chain. Records sealed before the chain existed have no such section.
    """
    stated = record.content.get("ledger")
    if stated is None:
        return
    state = ledger._read()
    entries = stated["entries"]
    if stated["ledger_id"] != state.ledger_id:
        raise RecordError(
            f"record {record.sha256[:12]} was sealed in ledger {stated['ledger_id'][:12]}, not in "
            f"{str(ledger.path)!r} (ledger {state.ledger_id[:12]}). Evaluate with the ledger that "
            "recorded the seal."
        )
    if entries > state.length or state.hashes[entries - 1] != stated["head"]:
        raise RecordError(
            f"record {record.sha256[:12]} was sealed when its ledger held {entries} entries ending "
            f"in {stated['head'][:12]}; the ledger {str(ledger.path)!r} does not hold that history "
            "(it was rolled back or rewritten since). Nothing was read or spent."
        )


def derived_levels(
    record: PreregistrationRecord, tests: tuple[RegisteredTest, ...], ledger: Ledger
) -> tuple[float, float]:
    """The family's level and each rate's one-sided level, recomputed, never read from the record.

    A table's protocol: ``alpha_per_rate = 1 - sqrt(1 - (1 - confidence_level) / family_size)``.
    A mechanism's: the ledger's own number ``k`` of the evaluation fixes the level
    ``1 - (1 - confidence_level) * 6 / (pi^2 k^2)`` and ``alpha_per_rate`` follows from it
    and the family size. The record's stated values must agree (within 1e-12, relative).

    Raises
    ------
    RecordError
        If a stated value differs from the recomputed one, the numbers of tests disagree, the
        family is smaller than the tests, or (a mechanism) the ledger numbered this evaluation
        otherwise or not at all.
    """
    from certify._core import check_confidence_level

    proto = record.content["protocol"]
    try:
        level = check_confidence_level(proto["confidence_level"], "record field protocol.confidence_level")
    except ParameterError as exc:
        raise RecordError(str(exc)) from None
    n_tests, family = int(proto["n_tests"]), int(proto["family_size"])
    if n_tests != len(tests) or n_tests != len(record.content["tests"]) or family < n_tests:
        raise RecordError(
            f"record {record.sha256[:12]} states {n_tests} tests in a family of {family} but holds "
            f"{len(record.content['tests'])}; the family must cover every registered test."
        )
    data = record.content["data"]
    counted = ""
    if data.get("kind") == "mechanism":
        slot = ledger.evaluation_of(str(data["reserved_fingerprint"]))
        if slot is None:
            raise RecordError(
                f"record {record.sha256[:12]} seals a mechanism's reserved stream that the ledger "
                f"{str(ledger.path)!r} never numbered; evaluations are counted by the ledger that "
                "sealed them."
            )
        k = slot.evaluation
        if proto["evaluation"] != k or not math.isclose(slot.confidence_level, level, rel_tol=1e-12):
            raise RecordError(
                f"record {record.sha256[:12]} states evaluation {proto['evaluation']!r} at level "
                f"{level!r}; the ledger numbered it evaluation {k} of {slot.mechanism!r} at level "
                f"{slot.confidence_level!r}. Derived values are recomputed, never trusted."
            )
        spent = (1.0 - level) * evaluation_share(k)
        counted = f" and the ledger's count k = {k}"
        expected = {"level_used": 1.0 - spent, "alpha_per_rate": rate_level(spent / family)}
    else:
        spent = 1.0 - level
        expected = {"alpha_per_rate": alpha_per_rate(family, level)}
    for name, value in expected.items():
        stated = proto[name]
        if not math.isclose(float(stated), value, rel_tol=1e-12):
            raise RecordError(
                f"record field protocol.{name} is {stated!r}, but the record's confidence_level "
                f"{level!r}, family_size {family}{counted} give {value!r}. Derived values are "
                "recomputed, never trusted: use the record as it was sealed."
            )
    return 1.0 - spent, expected["alpha_per_rate"]


def _rate_evidence(fp: int, n0: int, fn: int, n1: int, alpha: float) -> ErrorRateEvidence:
    """Error counts with their one-sided Clopper-Pearson upper bounds at ``alpha``."""
    return ErrorRateEvidence(
        false_positives=fp,
        n_class0=n0,
        false_negatives=fn,
        n_class1=n1,
        u_fpr=clopper_pearson_upper(fp, n0, alpha),
        u_fnr=clopper_pearson_upper(fn, n1, alpha),
    )


def _outcome_json(family: CertificateFamily) -> str:
    """A compact JSON summary of an evaluation for the ledger."""
    return json.dumps(
        {
            "confidence_level": family.confidence_level,
            "certificates": [
                {
                    "pair": [c.pair.a, c.pair.b],
                    "test": c.test_name,
                    "method": c.method,
                    "evidence": attrs.asdict(c.evidence),
                    "epsilon_lower": c.epsilon_lower,
                }
                for c in family.certificates
            ],
        },
        sort_keys=True,
    )
