"""The ``certify`` command line.

Exit codes: 0 success; 2 bad usage or bad input; 3 refused by the protocol (a spent reserved split,
a sealed protocol asked to change).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final, NoReturn

from certify import plan as _plan
from certify.errors import CertifyError, ProtocolError, RecordError

__all__ = ["main"]

EXIT_OK: Final = 0
EXIT_INPUT: Final = 2
EXIT_REFUSED: Final = 3


class _Parser(argparse.ArgumentParser):
    """argparse with exit code 2 and a hint on errors."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_INPUT, f"certify: error: {message}\nTry '{self.prog} --help'.\n")


def _say(line: str) -> None:
    """A progress line on stderr."""
    sys.stderr.write(f"[certify] {line}\n")
    sys.stderr.flush()


def _bar(label: str) -> Callable[[int, int], None]:
    """A one-line progress bar with an ETA on stderr."""
    start = time.perf_counter()

    def show(done: int, total: int) -> None:
        elapsed = time.perf_counter() - start
        eta = elapsed / max(done, 1) * (total - done)
        width = 24
        filled = int(width * done / max(total, 1))
        sys.stderr.write(
            f"\r[certify] {label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} "
            f"{elapsed:5.1f}s eta {eta:5.1f}s"
        )
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show


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


def _cmd_inspect(args: argparse.Namespace) -> int:
    """Describe a table and what its sizes allow."""
    from certify._core import check_confidence_level, check_delta, check_int
    from certify.errors import ParameterError

    if not 0.0 < args.dev_fraction < 1.0:
        raise ParameterError(f"--dev-fraction must be in (0, 1); got {args.dev_fraction!r}.")
    check_int(args.tests, "--tests", 1)
    check_confidence_level(args.confidence_level, "--confidence-level")
    check_delta(args.delta, "--delta")
    table = _load_table(args.table, args.label_column, not args.no_normalize)
    counts = sorted(table.counts.values())
    print(f"table: {args.table}")
    print(f"rows: {table.n_rows}; identities: {len(table.identities)}; dimension: {table.dimension}")
    print(f"rows per identity: min {counts[0]}, median {counts[len(counts) // 2]}, max {counts[-1]}")
    print("cleaning:")
    for line in table.cleaning.lines():
        print(f"  {line}")
    n_test = counts[0] - int(args.dev_fraction * counts[0])
    n_med = counts[len(counts) // 2] - int(args.dev_fraction * counts[len(counts) // 2])
    print(
        f"certificates (dev_fraction {args.dev_fraction}, {args.tests} tests, "
        f"{args.confidence_level:g} simultaneous confidence, delta {args.delta:g}):"
    )
    for label, n in (("smallest identity", n_test), ("median identity", n_med)):
        ceiling = _plan.ceiling(max(n, 1), args.tests, args.confidence_level, args.delta)
        if ceiling <= 0:
            print(
                f"  {label}: with {n} reserved rows per class and {args.tests} tests, no "
                "certificate can be positive (even a test with no error)."
            )
        else:
            print(
                f"  {label}: with {n} reserved rows per class and {args.tests} tests, the best "
                f"attainable certificate is epsilon_lower = {ceiling:.3f} (zero errors)."
            )
    return EXIT_OK


def _cmd_describe(args: argparse.Namespace) -> int:
    """Descriptive routes on the first N pairs of a seeded shuffle."""
    from certify.data import sample_pairs
    from certify.methods.audit import audit_pairs
    from certify.report import auc_histogram, describe_markdown, manifest, mmd_histogram, write_report

    table = _load_table(args.table, args.label_column, not args.no_normalize)
    n_all = len(table.identities) * (len(table.identities) - 1) // 2
    pairs = sample_pairs(table.identities, count=min(args.pairs, n_all), seed=args.seed)
    methods: tuple[Any, ...] = tuple(m.strip() for m in args.methods.split(","))
    _say(f"auditing {len(pairs)} pairs with {', '.join(methods)}")
    audit = audit_pairs(
        table,
        pairs,
        methods,
        permutations=args.permutations,
        seed=args.seed,
        progress=_bar("pairs"),
    )
    for summary, corners in audit.summaries():
        value = "score" if summary.status == "Diagnostic" else "epsilon_estimate"
        extra = "" if corners is None else f", exact corners {corners}"
        print(
            f"{summary.method:16s} [{summary.status}] median {value} = {summary.median:.4g} "
            f"over {summary.count} pairs (+inf: {summary.n_infinite}{extra})"
        )
    if args.out:
        figures = []
        if "mmd_tv" in methods:
            figures.append(("MMD across pairs", mmd_histogram(audit)))
        if "roc_oof" in methods or "mmd_permutation" in methods:
            figures.append(("AUC and p-values", auc_histogram(audit)))
        man = manifest(
            input_path=args.table,
            rows=table.n_rows,
            identities=len(table.identities),
            seeds={"pairs": args.seed},
            pairs=[p.as_tuple() for p in pairs],
        )
        md = describe_markdown(audit, man=man, figures=[c for c, _ in figures])
        md_path, html_path = write_report(args.out, "describe", md, figures, title="certify describe")
        _say(f"wrote {md_path} and {html_path}")
    return EXIT_OK


def _cmd_preregister(args: argparse.Namespace) -> int:
    """Development stage: split, select pairs, fit tests, seal, write the record."""
    from certify.protocol.files import AuditPlan, ProtocolFileError, load_protocol_file
    from certify.protocol.ledger import Ledger
    from certify.report import safe_path, write_atomic
    from certify.workflow import preregister

    plan = load_protocol_file(args.protocol)
    if not isinstance(plan, AuditPlan):
        raise ProtocolFileError(
            f"{args.protocol} is a {type(plan).__name__}; preregister takes an audit protocol "
            "(kind = \"audit\"). Run benchmarks with 'certify benchmark'."
        )
    out = Path(args.out)
    _writable_folder(out.parent)
    table = _load_table(args.data, plan.label_column, plan.normalize)
    ledger = Ledger(args.ledger)
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


def _cmd_evaluate(args: argparse.Namespace) -> int:
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
        text = Path(args.record).read_text(encoding="utf-8")
    except OSError as exc:
        raise RecordError(f"cannot read record {args.record!r}: {exc.strerror}.") from exc
    record = PreregistrationRecord.from_json(text)
    plan_info = record.content.get("annotations", {}).get("plan", {})
    table = _load_table(
        args.data, plan_info.get("label_column", "identity"), plan_info.get("normalize", True)
    )
    ledger = Ledger(args.ledger)
    sealed = SealedProtocol.from_record(record, table, ledger)
    _writable_folder(args.out)
    _say(f"evaluating {len(sealed.tests)} fixed tests on the reserved split (once, ever)")
    family = sealed.evaluate()
    claim_eps = args.claim_epsilon if args.claim_epsilon is not None else plan_info.get("claim_epsilon")
    claim_delta = args.claim_delta if args.claim_delta is not None else plan_info.get("claim_delta", 0.0)
    claim = None if claim_eps is None else Claim(epsilon=claim_eps, delta=claim_delta)
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
        input_path=args.data,
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
    md_path, html_path = write_report(args.out, "evaluation", md, figures, title="certify evaluation")
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
        safe_path(args.out, "certificates.json"),
        json.dumps({"family_id": family.family_id, "certificates": certs, "manifest": man}, indent=2),
    )
    _say(f"wrote {md_path}, {html_path} and certificates.json")
    return EXIT_OK


def _cmd_plan(args: argparse.Namespace) -> int:
    """Sample-size planning."""
    ceiling = _plan.ceiling(args.n, args.tests, args.confidence_level, args.delta)
    print(
        f"ceiling: with {args.n} reserved rows per class, {args.tests} tests and "
        f"{args.confidence_level:g} simultaneous confidence, no certificate can exceed "
        f"epsilon_lower = {ceiling:.4f} at delta = {args.delta:g}."
    )
    if args.epsilon is not None:
        need = _plan.required_n(args.epsilon, args.tests, args.confidence_level, args.delta)
        print(
            f"required: at least {need} reserved rows per class could certify more than "
            f"epsilon = {args.epsilon:g}."
        )
        if args.error_rate is not None:
            p = _plan.power(
                args.n,
                args.error_rate,
                args.error_rate,
                args.tests,
                args.confidence_level,
                args.delta,
                args.epsilon,
            )
            print(
                f"power: a test with error rates {args.error_rate:g} certifies more than {args.epsilon:g} "
                f"with probability {p:.3f} at n = {args.n}."
            )
    return EXIT_OK


def _cmd_demo(args: argparse.Namespace) -> int:
    """The built-in default: a complete audit of embedded synthetic data."""
    from certify.demo import run_demo

    return run_demo(Path(args.out), say=_say)


def _cmd_benchmark(args: argparse.Namespace) -> int:
    """Known-epsilon benchmark grid."""
    from certify.benchmark.grid import run_cli

    return run_cli(args, say=_say)


def _cmd_selftest(args: argparse.Namespace) -> int:
    """Coverage self-test: exit 0 when every route's failure rate is consistent with its level."""
    from certify.selftest import run_selftest

    report = run_selftest(quick=args.quick)
    print(report.to_text())
    return EXIT_OK if report.consistent else 1


def _cmd_report(args: argparse.Namespace) -> int:
    """Tables and figures from a benchmark results table."""
    from certify.benchmark.tables import report_cli

    return report_cli(args, say=_say)


# -- parser ------------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    """The full argument parser."""
    p = _Parser(
        prog="certify",
        description=(
            "Audit differential-privacy claims. Every number is a Diagnostic, a "
            "PopulationEstimate or a Certificate; only certificates can refute a claim."
        ),
        epilog="Exit codes: 0 ok, 2 bad usage or input, 3 refused by the protocol (e.g. a spent split).",
    )
    p.add_argument("--version", action="version", version="certify 0.1.0")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")

    d = sub.add_parser("demo", help="run the built-in synthetic audit and write reports")
    d.add_argument("--out", default="certify-demo", help="output folder (default: certify-demo)")
    d.set_defaults(func=_cmd_demo)

    def table_args(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("table", help="CSV with a header: an identity column and coordinate columns")
        sp.add_argument("--label-column", default="identity", help="identity column (default: identity)")
        sp.add_argument("--no-normalize", action="store_true", help="do not L2-normalize rows")

    i = sub.add_parser("inspect", help="rows, identities, cleaning, and what sample sizes allow")
    table_args(i)
    i.add_argument("--dev-fraction", type=float, default=0.7, help="planned development fraction")
    i.add_argument("--tests", type=int, default=5, help="planned number of tests (Bonferroni family)")
    i.add_argument("--confidence-level", type=float, default=0.95)
    i.add_argument("--delta", type=float, default=0.0)
    i.set_defaults(func=_cmd_inspect)

    ds = sub.add_parser("describe", help="descriptive routes with their statuses")
    table_args(ds)
    ds.add_argument("--pairs", type=int, default=100, help="first N pairs of a seeded shuffle")
    ds.add_argument("--seed", type=int, default=0)
    ds.add_argument(
        "--methods",
        default="gauss_mech,kde_lr,mmd_tv,roc_oof,mmd_permutation",
        help="comma-separated: gauss_mech,kde_lr,mmd_tv,roc_oof,mmd_permutation",
    )
    ds.add_argument("--permutations", type=int, default=10_000)
    ds.add_argument("--out", help="write describe.md / describe.html here")
    ds.set_defaults(func=_cmd_describe)

    pr = sub.add_parser("preregister", help="development stage: choose on development data and seal")
    pr.add_argument("protocol", help="protocol TOML file (see protocols/)")
    pr.add_argument("--data", required=True, help="the full table (CSV)")
    pr.add_argument("--ledger", required=True, help="ledger file (created if missing)")
    pr.add_argument("--out", required=True, help="where to write the record JSON")
    pr.set_defaults(func=_cmd_preregister)

    ev = sub.add_parser("evaluate", help="the one-shot test on reserved data; writes the report")
    ev.add_argument("record", help="pre-registration record JSON")
    ev.add_argument("--data", required=True, help="the same table used to preregister")
    ev.add_argument("--ledger", required=True, help="the ledger that recorded the seal")
    ev.add_argument("--out", required=True, help="report folder")
    ev.add_argument("--claim-epsilon", type=float, help="claimed epsilon to test (default: protocol's)")
    ev.add_argument("--claim-delta", type=float, help="claimed delta (default: protocol's)")
    ev.set_defaults(func=_cmd_evaluate)

    pl = sub.add_parser("plan", help="what a reserved test of n rows per class can certify")
    pl.add_argument("--n", type=int, required=True, help="reserved rows per class")
    pl.add_argument("--tests", type=int, default=1, help="tests in the Bonferroni family")
    pl.add_argument("--confidence-level", type=float, default=0.95)
    pl.add_argument("--delta", type=float, default=0.0)
    pl.add_argument("--epsilon", type=float, help="a claimed epsilon to refute")
    pl.add_argument("--error-rate", type=float, help="assumed error rate for the power")
    pl.set_defaults(func=_cmd_plan)

    b = sub.add_parser("benchmark", help="known-epsilon benchmark grid")
    b.add_argument("--preset", choices=("quick", "paper"), default="quick")
    b.add_argument("--workers", type=int, default=2)
    b.add_argument("--backend", choices=("local", "dask"), default="local")
    b.add_argument("--scheduler", help="Dask scheduler address (default: a LocalCluster)")
    b.add_argument("--out", default="certify-benchmark")
    b.set_defaults(func=_cmd_benchmark)

    r = sub.add_parser("report", help="tables and figures from a benchmark results table")
    r.add_argument("results", help="results.parquet or results.csv")
    r.add_argument("--out", required=True)
    r.set_defaults(func=_cmd_report)

    st = sub.add_parser("selftest", help="Monte Carlo coverage check of the certificate routes")
    st.add_argument("--quick", action="store_true", help="about a minute on 2 cores")
    st.set_defaults(func=_cmd_selftest)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except ProtocolError as exc:
        sys.stderr.write(f"certify: refused: {exc}\n")
        return EXIT_REFUSED
    except CertifyError as exc:
        sys.stderr.write(f"certify: error: {exc}\n")
        return EXIT_INPUT
    except OSError as exc:  # a file or folder that cannot be read or written
        sys.stderr.write(f"certify: error: {exc}\n")
        return EXIT_INPUT
    except KeyboardInterrupt:
        sys.stderr.write("certify: interrupted\n")
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
