"""The ``certify`` command line.

Exit codes: 0 success; 2 bad usage or bad input; 3 refused by the protocol (a spent reserved split,
a sealed protocol asked to change); 1 from ``selftest`` and ``verify`` when something is flagged.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final, NoReturn

from certify import commands
from certify.errors import CertifyError, ProtocolError

__all__ = ["main"]

EXIT_OK: Final = 0
EXIT_INPUT: Final = 2
EXIT_REFUSED: Final = 3


class _Parser(argparse.ArgumentParser):
    """argparse with exit code 2 and a hint on errors."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_INPUT, f"certify: error: {message}\nTry '{self.prog} --help'.\n")


def _call(command: Callable[..., int], args: argparse.Namespace, *names: str, **renamed: str) -> int:
    """Call a command function with the named parsed arguments (``parameter="argument"`` renames)."""
    given = {name: getattr(args, name) for name in names}
    given.update({param: getattr(args, arg) for param, arg in renamed.items()})
    return int(command(**given))


def _cmd_inspect(args: argparse.Namespace) -> int:
    """``certify inspect``."""
    return _call(
        commands.inspect_table, args, "dev_fraction", "tests", "confidence_level", "delta",
        "label_column", "no_normalize", table_path="table",
    )


def _cmd_describe(args: argparse.Namespace) -> int:
    """``certify describe``."""
    return _call(
        commands.describe_table, args, "label_column", "no_normalize", "seed", "methods",
        "permutations", "out", table_path="table", n_pairs="pairs",
    )


def _cmd_preregister(args: argparse.Namespace) -> int:
    """``certify preregister``."""
    return _call(
        commands.preregister_file, args,
        protocol_path="protocol", out_path="out", data_path="data", ledger_path="ledger",
    )


def _cmd_evaluate(args: argparse.Namespace) -> int:
    """``certify evaluate``."""
    return _call(
        commands.evaluate_record, args, "out", "claim_epsilon", "claim_delta", "claim_gdp",
        "claim_zcdp", "claim_profile", record_path="record", data_path="data", ledger_path="ledger",
    )


def _cmd_plan(args: argparse.Namespace) -> int:
    """``certify plan``."""
    return _call(
        commands.plan_report, args, "n", "tests", "confidence_level", "delta", "epsilon", "error_rate", "mmd"
    )


def _cmd_audit_mechanism(args: argparse.Namespace) -> int:
    """``certify audit-mechanism``."""
    return _call(
        commands.audit_mechanism_command, args, "mechanism", "input_a", "input_b", "calls", "seed",
        "confidence_level", "delta", "tests", "claim_epsilon", "claim_delta", "claim_gdp",
        "claim_zcdp", "claim_profile", "workers", "backend", "scheduler", "out",
        ledger_path="ledger", as_json="json",
    )


def _curve_claim_options(parser: argparse.ArgumentParser) -> None:
    """``--claim-gdp``, ``--claim-zcdp`` and ``--claim-profile`` (instead of --claim-epsilon)."""
    parser.add_argument("--claim-gdp", type=float, metavar="MU", help="claim: the mechanism is MU-GDP")
    parser.add_argument("--claim-zcdp", type=float, metavar="RHO", help="claim: the mechanism is RHO-zCDP")
    parser.add_argument(
        "--claim-profile",
        metavar="MODULE:FUNCTION",
        help="claim: a privacy profile epsilon -> delta, or a dp_accounting privacy loss "
        "distribution (IMPORTS AND RUNS YOUR CODE)",
    )


def _cmd_demo(args: argparse.Namespace) -> int:
    """The built-in default: a complete audit of embedded synthetic data."""
    from certify.demo import run_demo

    return run_demo(Path(args.out), say=commands._say)


def _cmd_benchmark(args: argparse.Namespace) -> int:
    """Known-epsilon benchmark grid."""
    from certify.benchmark.grid import run_cli

    return run_cli(args, say=commands._say)


def _cmd_selftest(args: argparse.Namespace) -> int:
    """Coverage self-test: exit 0 when every check is consistent with its level, 1 otherwise."""
    return _call(commands.selftest_report, args, "quick", "inject", "tight_only", "seed")


def _cmd_verify(args: argparse.Namespace) -> int:
    """``certify verify``: 0 when everything checks out, 1 when something does not."""
    return _call(commands.verify_reports, args, "reports", "export", ledger_path="ledger")


def _cmd_report(args: argparse.Namespace) -> int:
    """Tables and figures from a benchmark results table."""
    from certify.benchmark.tables import report_cli

    return report_cli(args, say=commands._say)


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
    i.add_argument("--tests", type=int, default=5, help="planned number of tests (union bound)")
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
    _curve_claim_options(ev)
    ev.set_defaults(func=_cmd_evaluate)

    am = sub.add_parser(
        "audit-mechanism",
        help="certify a lower bound on a callable mechanism's epsilon (suite name or module:function)",
        description=(
            "Audit a mechanism as a black box: development calls choose the input pair and the "
            "event, then reserved calls (made once, streamed) certify a lower bound on epsilon. "
            "MECHANISM is a suite name (see certify.blackbox.SUITE), a known-bug name "
            "(certify.blackbox.BUGS) or module:function. "
            "module:function IMPORTS AND RUNS YOUR CODE: the module is imported as Python would "
            "import it and the function is called many times. Only this argument ever imports "
            "code; no record or protocol file does."
        ),
    )
    am.add_argument(
        "mechanism", help="suite or known-bug name, or module:function (imports and runs your code)"
    )
    am.add_argument("--input-a", help="first input as JSON, e.g. [1, 1, 1] (default: the suite's pairs)")
    am.add_argument("--input-b", help="neighbouring input as JSON")
    am.add_argument("--calls", type=int, required=True, help="the whole budget of mechanism calls")
    am.add_argument("--seed", type=int, default=0)
    am.add_argument("--confidence-level", type=float, default=0.95)
    am.add_argument("--delta", type=float, default=0.0)
    am.add_argument("--tests", default="certify", help="'certify', 'paper' or family names, comma-separated")
    am.add_argument("--claim-epsilon", type=float, help="claimed epsilon (default: the suite's claim)")
    am.add_argument("--claim-delta", type=float, help="claimed delta (default: the bug's claim, else 0)")
    _curve_claim_options(am)
    am.add_argument("--ledger", help="ledger file (default: $CERTIFY_LEDGER or a per-user ledger)")
    am.add_argument("--workers", type=int, default=1, help="processes for the reserved calls")
    am.add_argument("--backend", choices=("local", "dask"), default="local")
    am.add_argument("--scheduler", help="Dask scheduler address (default: a LocalCluster)")
    am.add_argument("--json", action="store_true", help="print one JSON line (no progress)")
    am.add_argument("--out", help="write mechanism.md / mechanism.html and the record here")
    am.set_defaults(func=_cmd_audit_mechanism)

    pl = sub.add_parser("plan", help="what a reserved test of n rows per class can certify")
    pl.add_argument("--n", type=int, help="reserved rows per class (required unless --mmd is given)")
    pl.add_argument("--tests", type=int, default=1, help="tests in the family (union bound over tests)")
    pl.add_argument("--confidence-level", type=float, default=0.95)
    pl.add_argument("--delta", type=float, default=0.0)
    pl.add_argument("--epsilon", type=float, help="a claimed epsilon to refute")
    pl.add_argument("--error-rate", type=float, help="assumed error rate for the power")
    pl.add_argument(
        "--mmd", type=float, help="an expected MMD statistic: rows per class for a positive MMD certificate"
    )
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

    vf = sub.add_parser(
        "verify",
        help="check reports or records against the ledger (or its export) that issued them",
        description=(
            "Replay the ledger's hash chain and check each report or record against it: issued by "
            "this ledger, its history intact up to the report (nothing dropped, rolled back or "
            "rewritten), the outcome the ledger recorded equal to the report's, and no two "
            "reports evaluating the same reserved data. Exit 0 when everything checks out, 1 "
            "when something does not (docs/trust.md)."
        ),
    )
    vf.add_argument(
        "reports", nargs="*", metavar="REPORT",
        help="report folders (evaluate/audit-mechanism --out), certificates.json, summary.json or records",
    )
    vf.add_argument("--ledger", required=True, help="the ledger file, or its export (JSON)")
    vf.add_argument(
        "--export", help="also write the ledger's export here (JSON), to publish with the reports"
    )
    vf.set_defaults(func=_cmd_verify)

    from certify.selftest import INJECTIONS

    st = sub.add_parser(
        "selftest",
        help="coverage self-test: tight known-epsilon cases and a Monte Carlo of the certificate routes",
        description=(
            "Tight cases (seconds): known-epsilon pairs whose certified bound is tight, so a "
            "correct certify fails with probability near 0.05 (exact); --inject substitutes a "
            "known bug there to see it flagged. Route Monte Carlo (about a minute with --quick): "
            "every certificate route through seal/evaluate. Exit 0 when all are consistent, 1 "
            "when something is flagged."
        ),
    )
    st.add_argument("--quick", action="store_true", help="about a minute on 2 cores")
    st.add_argument(
        "--inject",
        choices=INJECTIONS,
        default="none",
        help="substitute a known bug into the tight cases (default: none)",
    )
    st.add_argument(
        "--tight-only", action="store_true", help="only the tight cases (skip the route Monte Carlo)"
    )
    st.add_argument("--seed", type=int, default=0, help="seed of the tight cases' simulated data")
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
