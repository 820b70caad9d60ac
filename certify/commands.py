"""The work behind each ``certify`` command, as functions of plain arguments.

The command line (:mod:`certify.cli`) parses arguments and maps errors to exit codes; the demo
(:mod:`certify.demo`) calls the same functions. Neither imports the other's entry point.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from certify import plan as _plan
from certify.errors import RecordError

__all__ = ["describe_table", "evaluate_record", "inspect_table", "plan_report", "preregister_file"]

EXIT_OK: Final = 0


def _say(line: str) -> None:
    """A progress line on stderr."""
    sys.stderr.write(f"[certify] {line}\n")
    sys.stderr.flush()


def _bar(label: str) -> Callable[[int, int], None]:
    """A ``(done, total)`` progress display on stderr: a bar on a terminal, a few lines in a log."""
    from certify._progress import progress_callback

    return progress_callback(f"[certify] {label}")


def _load_table(path: str, label_column: str, normalize: bool) -> Any:
    """Read a table, reporting progress."""
    from certify.data import EmbeddingTable

    _say(f"reading {path}")
    return EmbeddingTable.from_csv(path, label_column=label_column, normalize=normalize)


def _writable_folder(path: str | Path) -> None:
    """Create an output folder (or check it) before anything is sealed or spent."""
    import tempfile

    from certify.errors import DataError

    try:
        Path(path).mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise DataError(
            f"output folder {str(path)!r} cannot be written ({exc.strerror or exc}); nothing was "
            "sealed or evaluated. Choose another --out."
        ) from exc


# -- commands ----------------------------------------------------------------------------------


def inspect_table(
    *,
    dev_fraction: float,
    tests: int,
    confidence_level: float,
    delta: float,
    table_path: str,
    label_column: str,
    no_normalize: bool,
) -> int:
    """Describe a table and what its sizes allow."""
    from certify._core import check_confidence_level, check_delta, check_int
    from certify.errors import ParameterError

    if not 0.0 < dev_fraction < 1.0:
        raise ParameterError(f"--dev-fraction must be in (0, 1); got {dev_fraction!r}.")
    check_int(tests, "--tests", 1)
    check_confidence_level(confidence_level, "--confidence-level")
    check_delta(delta, "--delta")
    table = _load_table(table_path, label_column, not no_normalize)
    counts = sorted(table.counts.values())
    print(f"table: {table_path}")
    print(f"rows: {table.n_rows}; identities: {len(table.identities)}; dimension: {table.dimension}")
    print(f"rows per identity: min {counts[0]}, median {counts[len(counts) // 2]}, max {counts[-1]}")
    print("cleaning:")
    for line in table.cleaning.lines():
        print(f"  {line}")
    n_test = counts[0] - int(dev_fraction * counts[0])
    n_med = counts[len(counts) // 2] - int(dev_fraction * counts[len(counts) // 2])
    print(
        f"certificates (dev_fraction {dev_fraction}, {tests} tests, "
        f"{confidence_level:g} simultaneous confidence, delta {delta:g}):"
    )
    for label, n in (("smallest identity", n_test), ("median identity", n_med)):
        ceiling = _plan.ceiling(max(n, 1), tests, confidence_level, delta)
        if ceiling <= 0:
            print(
                f"  {label}: with {n} reserved rows per class and {tests} tests, no "
                "certificate can be positive (even a test with no error)."
            )
        else:
            print(
                f"  {label}: with {n} reserved rows per class and {tests} tests, the best "
                f"attainable certificate is epsilon_lower = {ceiling:.3f} (zero errors)."
            )
    return EXIT_OK


def describe_table(
    *,
    table_path: str,
    label_column: str,
    no_normalize: bool,
    n_pairs: int,
    seed: int,
    methods: str,
    permutations: int,
    out: str | None,
) -> int:
    """Descriptive routes on the first N pairs of a seeded shuffle."""
    from certify.data import sample_pairs
    from certify.methods.audit import audit_pairs
    from certify.report import auc_histogram, describe_markdown, manifest, mmd_histogram, write_report

    table = _load_table(table_path, label_column, not no_normalize)
    n_all = len(table.identities) * (len(table.identities) - 1) // 2
    pairs = sample_pairs(table.identities, count=min(n_pairs, n_all), seed=seed)
    chosen: tuple[Any, ...] = tuple(m.strip() for m in methods.split(","))
    _say(f"auditing {len(pairs)} pairs with {', '.join(chosen)}")
    audit = audit_pairs(
        table,
        pairs,
        chosen,
        permutations=permutations,
        seed=seed,
        progress=_bar("pairs"),
    )
    for summary, corners in audit.summaries():
        value = "score" if summary.status == "Diagnostic" else "epsilon_estimate"
        extra = "" if corners is None else f", exact corners {corners}"
        print(
            f"{summary.method:16s} [{summary.status}] median {value} = {summary.median:.4g} "
            f"over {summary.count} pairs (+inf: {summary.n_infinite}{extra})"
        )
    if out:
        figures = []
        if "mmd_tv" in chosen:
            figures.append(("MMD across pairs", mmd_histogram(audit)))
        if "roc_oof" in chosen or "mmd_permutation" in chosen:
            figures.append(("AUC and p-values", auc_histogram(audit)))
        man = manifest(
            input_path=table_path,
            rows=table.n_rows,
            identities=len(table.identities),
            seeds={"pairs": seed},
            pairs=[p.as_tuple() for p in pairs],
        )
        md = describe_markdown(audit, man=man, figures=[c for c, _ in figures])
        md_path, html_path = write_report(out, "describe", md, figures, title="certify describe")
        _say(f"wrote {md_path} and {html_path}")
    return EXIT_OK


def preregister_file(
    *,
    protocol_path: str,
    out_path: str,
    data_path: str,
    ledger_path: str,
) -> int:
    """Development stage: split, select pairs, fit tests, seal, write the record."""
    from certify.protocol.files import AuditPlan, ProtocolFileError, load_protocol_file
    from certify.protocol.ledger import Ledger
    from certify.report import safe_path, write_atomic
    from certify.workflow import preregister

    plan = load_protocol_file(protocol_path)
    if not isinstance(plan, AuditPlan):
        raise ProtocolFileError(
            f"{protocol_path} is a {type(plan).__name__}; preregister takes an audit protocol "
            "(kind = \"audit\"). Run benchmarks with 'certify benchmark'."
        )
    out = Path(out_path)
    _writable_folder(out.parent)
    table = _load_table(data_path, plan.label_column, plan.normalize)
    ledger = Ledger(ledger_path)
    pre = preregister(plan, table, ledger, progress=_say)
    write_atomic(safe_path(out.parent, out.name), pre.sealed.record.to_json())
    print(
        f"sealed protocol {plan.name!r}: {len(pre.selected)} tests on pairs "
        + ", ".join(f"{a}~{b}" for a, b in pre.selected)
    )
    print(f"record: {out} (SHA-256 {pre.sealed.record.sha256})")
    print(f"ledger: {ledger.path}")
    print("next: certify evaluate RECORD --data TABLE --ledger LEDGER --out DIR  (once, ever)")
    return EXIT_OK


def evaluate_record(
    *,
    record_path: str,
    data_path: str,
    ledger_path: str,
    out: str,
    claim_epsilon: float | None,
    claim_delta: float | None,
) -> int:
    """The one-shot test: evaluate a sealed record on its reserved rows and write the report."""
    import attrs

    from certify.claims import Claim, refute
    from certify.protocol import PreregistrationRecord, SealedProtocol
    from certify.protocol.ledger import Ledger
    from certify.report import (
        certificate_bars,
        confidence_corners,
        evaluation_markdown,
        manifest,
        safe_path,
        write_atomic,
        write_report,
    )
    from certify.results import ErrorRateEvidence

    try:
        text = Path(record_path).read_text(encoding="utf-8")
    except OSError as exc:
        raise RecordError(f"cannot read record {record_path!r}: {exc.strerror}.") from exc
    record = PreregistrationRecord.from_json(text)
    plan_info = record.content.get("annotations", {}).get("plan", {})
    table = _load_table(
        data_path, plan_info.get("label_column", "identity"), plan_info.get("normalize", True)
    )
    ledger = Ledger(ledger_path)
    sealed = SealedProtocol.from_record(record, table, ledger)
    _writable_folder(out)
    _say(f"evaluating {len(sealed.tests)} fixed tests on the reserved split (once, ever)")
    family = sealed.evaluate()
    claim_eps = claim_epsilon if claim_epsilon is not None else plan_info.get("claim_epsilon")
    delta_claimed = claim_delta if claim_delta is not None else plan_info.get("claim_delta", 0.0)
    claim = None if claim_eps is None else Claim(epsilon=claim_eps, delta=delta_claimed)
    for c in family.certificates:
        basis = (
            f"errors {c.evidence.false_positives}/{c.n_class0} and {c.evidence.false_negatives}/{c.n_class1}"
            if isinstance(c.evidence, ErrorRateEvidence)
            else f"MMD lower bound {c.evidence.mmd_lower:.4f} from {c.n_class0}+{c.n_class1} rows"
        )
        print(
            f"{c.pair}: epsilon_lower = {c.epsilon_lower:.4f} [Certificate, "
            f"{family.confidence_level:g} simultaneous] {basis}"
        )
    if claim is not None:
        print(refute(claim, family))
    entry = ledger.entry(sealed.reserved_fingerprint)
    man = manifest(
        input_path=data_path,
        rows=table.n_rows,
        identities=len(table.identities),
        seeds={
            "split": record.content["data"]["seed"],
            "pairs": plan_info.get("pair_seed", 0),
            "cv": plan_info.get("cv_seed", 0),
        },
        pairs=[t.pair.as_tuple() for t in sealed.tests],
        record_sha256=record.sha256,
        ledger_entry=None
        if entry is None
        else attrs.asdict(entry, filter=lambda a, v: a.name != "outcome_json"),
    )
    figures = [
        ("Certified lower bounds", certificate_bars(family, claim)),
        ("Confidence corners", confidence_corners(family)),
    ]
    md = evaluation_markdown(family, claim=claim, man=man, figures=[c for c, _ in figures])
    md_path, html_path = write_report(out, "evaluation", md, figures, title="certify evaluation")
    certs = [
        {
            "pair": list(c.pair.as_tuple()),
            "status": "Certificate",
            "epsilon_lower": c.epsilon_lower,
            "delta": c.delta,
            "confidence_level": c.confidence_level,
            "method": c.method,
            "test": c.test_name,
            "alpha_per_rate": c.alpha_per_rate,
            **attrs.asdict(c.evidence),
        }
        for c in family.certificates
    ]
    write_atomic(
        safe_path(out, "certificates.json"),
        json.dumps({"family_id": family.family_id, "certificates": certs, "manifest": man}, indent=2),
    )
    _say(f"wrote {md_path}, {html_path} and certificates.json")
    return EXIT_OK


def plan_report(
    *,
    n: int,
    tests: int,
    confidence_level: float,
    delta: float,
    epsilon: float | None,
    error_rate: float | None,
) -> int:
    """Sample-size planning."""
    ceiling = _plan.ceiling(n, tests, confidence_level, delta)
    print(
        f"ceiling: with {n} reserved rows per class, {tests} tests and "
        f"{confidence_level:g} simultaneous confidence, no certificate can exceed "
        f"epsilon_lower = {ceiling:.4f} at delta = {delta:g}."
    )
    if epsilon is not None:
        need = _plan.required_n(epsilon, tests, confidence_level, delta)
        print(
            f"required: at least {need} reserved rows per class could certify more than "
            f"epsilon = {epsilon:g}."
        )
        if error_rate is not None:
            p = _plan.power(
                n,
                error_rate,
                error_rate,
                tests,
                confidence_level,
                delta,
                epsilon,
            )
            print(
                f"power: a test with error rates {error_rate:g} certifies more than {epsilon:g} "
                f"with probability {p:.3f} at n = {n}."
            )
    return EXIT_OK


