"""The work behind each ``certify`` command, as functions of plain arguments.

The command line (:mod:`certify.cli`) parses arguments and maps errors to exit codes; the demo
(:mod:`certify.demo`) calls the same functions. Neither imports the other's entry point.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from certify import plan as _plan
from certify._core import lower_bound_text
from certify.errors import ParameterError, RecordError

if TYPE_CHECKING:
    from certify.claims import AnyClaim

__all__ = [
    "describe_table",
    "evaluate_record",
    "inspect_table",
    "plan_report",
    "preregister_file",
    "selftest_report",
    "verify_reports",
]

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
    from certify.workflow import candidate_rule

    table = _load_table(table_path, label_column, not no_normalize)
    pairs = sample_pairs(table.identities, count=n_pairs, seed=seed)
    chosen: tuple[Any, ...] = tuple(m.strip() for m in methods.split(","))
    _say(f"auditing {candidate_rule(n_pairs, len(table.identities))} with {', '.join(chosen)}")
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
    for line in audit.skipped_lines():
        print(line)
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
    claim_gdp: float | None = None,
    claim_zcdp: float | None = None,
    claim_profile: str | None = None,
) -> int:
    """The one-shot test: evaluate a sealed record on its reserved rows and write the report."""
    import attrs

    from certify.claims import refute
    from certify.protocol import PreregistrationRecord, SealedProtocol
    from certify.protocol.ledger import Ledger
    from certify.report import (
        certificate_bars,
        confidence_corners,
        evaluation_markdown,
        manifest,
        safe_path,
        tradeoff_region,
        write_atomic,
        write_report,
    )
    from certify.results import ErrorRateEvidence

    try:
        text = Path(record_path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(
            f"record {record_path!r} is not UTF-8 text ({exc.reason}); give the record JSON that "
            "certify preregister wrote."
        ) from exc
    except OSError as exc:
        raise RecordError(f"cannot read record {record_path!r}: {exc.strerror}.") from exc
    record = PreregistrationRecord.from_json(text)
    plan_info = record.content.get("annotations", {}).get("plan", {})
    # the claim is checked before anything is spent
    claim = claim_from_options(
        epsilon=claim_epsilon, delta=claim_delta, gdp_mu=claim_gdp, zcdp_rho=claim_zcdp,
        profile=claim_profile, default=_record_claim(plan_info),
    )
    table = _load_table(
        data_path, plan_info.get("label_column", "identity"), plan_info.get("normalize", True)
    )
    ledger = Ledger(ledger_path)
    sealed = SealedProtocol.from_record(record, table, ledger)
    _writable_folder(out)
    _say(f"evaluating {len(sealed.tests)} fixed tests on the reserved split (once, ever)")
    family = sealed.evaluate()
    for c in family.certificates:
        basis = (
            f"errors {c.evidence.false_positives}/{c.n_class0} and {c.evidence.false_negatives}/{c.n_class1}"
            if isinstance(c.evidence, ErrorRateEvidence)
            else f"MMD lower bound {lower_bound_text(c.evidence.mmd_lower, 4)} from "
            f"{c.n_class0}+{c.n_class1} rows"
        )
        print(
            f"{c.pair}: epsilon_lower = {lower_bound_text(c.epsilon_lower, 4)} [Certificate, "
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
        ("Certified region and claimed curve", tradeoff_region(family, claim)),
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
    write_atomic(safe_path(out, "record.json"), record.to_json())
    _say(f"wrote {md_path}, {html_path}, certificates.json and record.json")
    stamp = family.certificates[0].ledger
    print(
        f"ledger: evaluation {stamp.evaluation} of ledger {stamp.ledger_id}, entry {stamp.sequence} "
        f"({stamp.head[:16]}); publish it with the report: certify verify {out} --ledger "
        f"{ledger.path} --export LEDGER.json"
    )
    return EXIT_OK


def plan_report(
    *,
    n: int | None,
    tests: int,
    confidence_level: float,
    delta: float,
    epsilon: float | None,
    error_rate: float | None,
    mmd: float | None = None,
) -> int:
    """Sample-size planning (every argument is checked and every number computed before printing)."""
    if n is None and mmd is None:
        raise ParameterError(
            "--n must be given unless --mmd is; got neither. Pass --n N (reserved rows per class) "
            "or --mmd VALUE (an expected MMD statistic)."
        )
    if n is None and epsilon is not None and error_rate is not None:
        raise ParameterError("--error-rate needs --n, the reserved rows per class of the power.")
    lines: list[str] = []
    if n is not None:
        ceiling = _plan.ceiling(n, tests, confidence_level, delta)
        lines.append(
            f"ceiling: with {n} reserved rows per class, {tests} tests and "
            f"{confidence_level:g} simultaneous confidence, no certificate can exceed "
            f"epsilon_lower = {ceiling:.4f} at delta = {delta:g}."
        )
    if epsilon is not None:
        need = _plan.required_n(epsilon, tests, confidence_level, delta)
        lines.append(
            f"required: at least {need} reserved rows per class could certify more than "
            f"epsilon = {epsilon:g}."
        )
        if n is not None and error_rate is not None:
            p = _plan.power(
                n,
                error_rate,
                error_rate,
                tests,
                confidence_level,
                delta,
                epsilon,
            )
            lines.append(
                f"power: a test with error rates {error_rate:g} certifies more than {epsilon:g} "
                f"with probability {p:.3f} at n = {n}."
            )
    if mmd is not None:
        need_mmd = _plan.mmd_required_n(mmd, tests, confidence_level)
        lines.append(
            f"mmd required: an observed MMD statistic of {mmd:g} gives a positive certified MMD bound "
            f"only with at least {need_mmd} reserved rows per class ({tests} tests, "
            f"{confidence_level:g} simultaneous confidence)."
        )
        if n is not None:
            top = _plan.mmd_ceiling(n, tests, confidence_level, delta)
            if top.mmd_lower > 0.0:
                limit = (
                    f"so no MMD certificate can exceed mmd_lower = {top.mmd_lower:.4f}, "
                    f"epsilon_lower = {top.epsilon_lower:.4f} at delta = {delta:g}"
                )
            else:
                limit = "above sqrt(2), the largest possible MMD, so no MMD certificate can be positive"
            lines.append(
                f"mmd ceiling: with {n} reserved rows per class the deduction of Theorem 7 is "
                f"{top.slack:.4f}, {limit}; an observed {mmd:g} gives mmd_lower = "
                f"{max(0.0, mmd - top.slack):.4f}."
            )
    print("\n".join(lines))
    return EXIT_OK




def _load_mechanism(spec: str) -> tuple[Any, Any]:
    """A suite or known-bug mechanism by name, or the user's ``module:function`` (runs their code)."""
    from certify.blackbox.bugs import BUGS
    from certify.blackbox.suite import SUITE
    from certify.errors import ParameterError

    if spec in SUITE:
        return SUITE[spec], SUITE[spec]
    if spec in BUGS:
        return BUGS[spec], BUGS[spec]
    if ":" not in spec:
        raise ParameterError(
            f"mechanism must be a suite name ({', '.join(SUITE)}), a known-bug name "
            f"({', '.join(BUGS)}) or module:function; got {spec!r}."
        )
    target = _import_object(spec, "mechanism")
    if not callable(target):
        raise ParameterError(f"{spec} is not callable; it must be mechanism(x, n, rng).")
    return target, None


def _import_object(spec: str, role: str) -> Any:
    """The object ``module:qualname`` names (imports the module: runs the user's code)."""
    import importlib

    from certify.errors import ParameterError

    module_name, sep, qualname = spec.partition(":")
    if not sep or not module_name or not qualname:
        raise ParameterError(f"{role} must be module:function; got {spec!r}.")
    # as `python -c "import module"` would: the current folder first (an installed `certify`
    # script has its own folder there instead); it stays for the workers that import it again
    here = os.getcwd()
    if "" not in sys.path and here not in sys.path:
        sys.path.insert(0, here)
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ParameterError(
            f"cannot import module {module_name!r} for {role} {spec!r} ({exc}) from the "
            f"current folder {here!r} or the installed packages. Run from the folder that holds "
            f"{module_name.split('.')[0]}.py, or install it."
        ) from exc
    for part in qualname.split("."):
        if not hasattr(target, part):
            raise ParameterError(f"module {module_name!r} has no attribute {qualname!r}.")
        target = getattr(target, part)
    return target


def _record_claim(plan: Mapping[str, Any]) -> AnyClaim | None:
    """The claim a protocol file stated, from its plan in the record's annotations."""
    from certify.claims import Claim, GDPClaim, ProfileClaim, ZCDPClaim

    if plan.get("claim_epsilon") is not None:
        return Claim(plan["claim_epsilon"], plan.get("claim_delta", 0.0))
    if plan.get("claim_gdp_mu") is not None:
        return GDPClaim(plan["claim_gdp_mu"])
    if plan.get("claim_zcdp_rho") is not None:
        return ZCDPClaim(plan["claim_zcdp_rho"])
    if plan.get("claim_profile") is not None:
        points = [(float(e), float(d)) for e, d in plan["claim_profile"]]
        return ProfileClaim.from_points(points, name="profile of the protocol file")
    return None


def claim_from_options(
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    gdp_mu: float | None = None,
    zcdp_rho: float | None = None,
    profile: str | None = None,
    default: AnyClaim | None = None,
) -> AnyClaim | None:
    """The claim the command line states (at most one kind), else ``default``.

    ``profile`` is ``module:function``: a callable ``epsilon -> delta``, or a
    ``dp_accounting`` privacy loss distribution (an object with ``get_delta_for_epsilon``);
    importing it runs the user's code.
    """
    from certify.claims import Claim, GDPClaim, ProfileClaim, ZCDPClaim
    from certify.errors import ParameterError

    given = [
        name for name, value in (
            ("--claim-epsilon", epsilon), ("--claim-gdp", gdp_mu), ("--claim-zcdp", zcdp_rho),
            ("--claim-profile", profile),
        ) if value is not None
    ]
    if len(given) > 1:
        raise ParameterError(f"state one claim; got {' and '.join(given)}. Keep one of them.")
    if delta is not None and gdp_mu is None and zcdp_rho is None and profile is None and epsilon is None:
        if not isinstance(default, Claim):
            raise ParameterError(
                "--claim-delta belongs to a point claim: give --claim-epsilon with it (curve "
                "claims --claim-gdp, --claim-zcdp, --claim-profile state their own deltas)."
            )
        return Claim(default.epsilon, delta)
    if delta is not None and epsilon is None:
        raise ParameterError(f"--claim-delta belongs to --claim-epsilon, not to {given[0]}; drop it.")
    if epsilon is not None:
        return Claim(epsilon, 0.0 if delta is None else delta)
    if gdp_mu is not None:
        return GDPClaim(gdp_mu)
    if zcdp_rho is not None:
        return ZCDPClaim(zcdp_rho)
    if profile is not None:
        found = _import_object(profile, "--claim-profile")
        if callable(getattr(found, "get_delta_for_epsilon", None)):
            return ProfileClaim.from_pld(found, name=profile)
        if not callable(found):
            raise ParameterError(
                f"--claim-profile {profile} must name a function epsilon -> delta or a "
                "dp_accounting privacy loss distribution."
            )
        return ProfileClaim(found, name=profile)
    return default


def _json_input(text: str | None, name: str) -> Any:
    """A mechanism input given as JSON on the command line."""
    from certify.errors import ParameterError

    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ParameterError(
            f"{name} must be JSON, e.g. 0 or [1, 2, 3]; got {text!r} ({exc})."
        ) from exc


def audit_mechanism_command(
    *,
    mechanism: str,
    input_a: str | None,
    input_b: str | None,
    calls: int,
    seed: int,
    confidence_level: float,
    delta: float,
    tests: str,
    claim_epsilon: float | None,
    claim_delta: float | None,
    ledger_path: str | None,
    claim_gdp: float | None = None,
    claim_zcdp: float | None = None,
    claim_profile: str | None = None,
    workers: int,
    backend: str,
    scheduler: str | None,
    as_json: bool,
    out: str | None,
) -> int:
    """Audit a suite mechanism or the user's function; print the result, write the report."""
    from certify._core import check_confidence_level
    from certify.blackbox.audit import audit_mechanism, default_ledger
    from certify.claims import Claim, claim_parameter
    from certify.data.draws import mechanism_identity
    from certify.errors import ParameterError
    from certify.protocol.ledger import Ledger, evaluation_share
    from certify.report.mechanism import mechanism_summary, write_mechanism_report

    mech, suite = _load_mechanism(mechanism)
    a, b = _json_input(input_a, "--input-a"), _json_input(input_b, "--input-b")
    if (a is None) != (b is None):
        raise ParameterError("give both --input-a and --input-b, or neither (suite mechanisms only).")
    if a is None and suite is None:
        raise ParameterError(
            f"{mechanism} is your own function: give its two neighbouring inputs with --input-a "
            "and --input-b (JSON)."
        )
    default_claim = None
    if suite is not None:
        default_claim = Claim(suite.claimed_epsilon, getattr(suite, "claimed_delta", None) or 0.0)
    claim = claim_from_options(
        epsilon=claim_epsilon, delta=claim_delta, gdp_mu=claim_gdp, zcdp_rho=claim_zcdp,
        profile=claim_profile, default=default_claim,
    )
    if out:
        _writable_folder(out)
    ledger = default_ledger() if ledger_path is None else Ledger(ledger_path)
    family_names: Any = tests if tests in ("certify", "paper") else [t.strip() for t in tests.split(",")]
    pairs = None if a is not None else [(list(x), list(y)) for x, y in suite.input_pairs]
    which = "the given inputs" if pairs is None else f"{len(pairs)} candidate input pairs"
    check_confidence_level(confidence_level, "--confidence-level")
    k = len(ledger.evaluations(mechanism_identity(mech))) + 1
    level = 1.0 - (1.0 - confidence_level) * evaluation_share(k)
    _say(
        f"auditing {mechanism} with {calls} calls on {which}: evaluation {k} of this mechanism "
        f"in ledger {ledger.path}, certified at level {level:.4f}"
        + ("" if k == 1 else f" ({k - 1} earlier, every one counted)")
    )
    audit = audit_mechanism(
        mech, a, b, inputs=pairs, calls=calls, confidence_level=confidence_level, delta=delta,
        claim=claim, tests=family_names, seed=seed, ledger=ledger, progress=not as_json, workers=workers,
        backend=backend,  # type: ignore[arg-type]
        scheduler=scheduler, name=mechanism,
    )
    summary = mechanism_summary(audit, claim)
    if as_json:
        print(json.dumps(summary, sort_keys=True))
    else:
        c = audit.certificate
        print(
            f"{audit.mechanism}: epsilon_lower = {lower_bound_text(c.epsilon_lower, 4)} [Certificate, level "
            f"{audit.level_used:.4f}; evaluation {audit.evaluation} of this mechanism, all at "
            f"{audit.confidence_level:g}] on {c.pair} with {audit.chosen}"
        )
        if claim is not None and not isinstance(claim, Claim):
            name = claim_parameter(claim)[0]
            value = c.mu_lower if name == "mu" else c.rho_lower if name == "rho" else None
            if value is not None:
                print(
                    f"{audit.mechanism}: {name}_lower = {lower_bound_text(value, 4)} [Certificate, level "
                    f"{audit.level_used:.4f}]"
                )
        if claim is not None:
            print(f"claim {claim.describe()}: {summary['verdict']}")
    if out:
        published = (
            [(p.tool, p.epsilon_lower, p.confidence_level) for p in suite.published]
            if suite is not None else []
        )
        md_path, html_path = write_mechanism_report(
            audit, out, ledger=ledger, seed=seed, claim=claim, workers=workers,
            extra={"backend": backend}, published=published, summary=summary,
            exact=None if suite is None or suite.true_epsilon is None
            else (suite.true_epsilon, suite.true_epsilon_note),
        )
        _say(f"wrote {md_path}, {html_path}, record.json and summary.json")
    return EXIT_OK


def verify_reports(*, reports: list[str], ledger_path: str, export: str | None) -> int:
    """Check reports against a ledger or its export; print the outcome; 0 when verified, 1 if not."""
    from certify.errors import DataError
    from certify.protocol.ledger import Ledger
    from certify.protocol.verify import verify
    from certify.report import write_atomic

    outcome = verify(list(reports), ledger_path)
    print(outcome.to_text())
    if export:
        if not Path(ledger_path).is_file():
            raise DataError(f"--export needs the ledger file; {ledger_path!r} does not exist.")
        text = Ledger(ledger_path).export()
        write_atomic(Path(export), text)
        _say(f"wrote the ledger's export to {export} ({len(text)} bytes)")
    return EXIT_OK if outcome.verified else 1


def selftest_report(*, quick: bool, inject: str, tight_only: bool, seed: int, workers: int = 2) -> int:
    """The coverage self-test: print its table; 0 when consistent, 1 when something is flagged."""
    from certify.selftest import check_injection, run_selftest

    if not tight_only:
        length = "about a minute" if quick else "several minutes"
        _say(f"route Monte Carlo: {length} on 2 cores (--tight-only skips it)")
    report = run_selftest(
        quick=quick, workers=workers, inject=check_injection(inject), routes=not tight_only, seed=seed,
        progress=True,
    )
    print(report.to_text())
    return EXIT_OK if report.consistent else 1
