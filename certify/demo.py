"""``certify demo``: a complete audit of built-in synthetic data with a known answer.

No download: the data are generated from fixed seeds. The demo
1. writes a "face-like" embedding table made by a Gaussian mechanism with known pairwise epsilon,
2. inspects it, pre-registers an audit on its development rows and evaluates it once,
3. shows that a second evaluation is refused,
4. runs the descriptive routes and a small known-epsilon benchmark,
and writes Markdown and HTML reports. Every printed number carries its status.
"""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

import numpy as np

from certify._core import lower_bound_text

__all__ = ["DEMO_PROTOCOL", "make_demo_table", "run_demo"]

DEMO_PROTOCOL: Final = """\
# The demo audit: pre-registered before the demo table is read.
kind = "audit"

[protocol]
name = "demo-audit"
description = "Synthetic face-like table from a Gaussian mechanism with known pairwise epsilon."
confidence_level = 0.95
delta = 0.00001

[data]
label_column = "identity"
normalize = false        # synthetic mechanism outputs are audited as released (paper Sec. 6.1)
dev_fraction = 0.7
split_seed = 0

[pairs]
candidates = 40
seed = 0
select = 5
disjoint = true

[test]
classifier = "logistic"
C = 1.0
max_iter = 1000
threshold = "youden"
folds = 5
seed = 0

[claim]
epsilon = 1.0
delta = 0.00001
"""

_N_IDENTITIES: Final = 24
_DIMENSION: Final = 64
_ROWS: Final = 100
_EPSILON_G: Final = 32.0


def make_demo_table(path: Path, seed: int = 2026) -> dict[tuple[str, str], float]:
    """Write the demo table CSV; return the exact pairwise epsilon (delta = 1e-5) of every pair."""
    from certify.benchmark.mechanisms import Gaussian
    from certify.benchmark.prototypes import sensitivities

    rng = np.random.default_rng(seed)
    raw = rng.standard_normal((_N_IDENTITIES, _DIMENSION))
    protos = sensitivities(raw / np.linalg.norm(raw, axis=1, keepdims=True), name="demo", seed=seed)
    mech = Gaussian(protos, _EPSILON_G, 1e-5)
    names = [f"person{i:02d}" for i in range(_N_IDENTITIES)]
    children = np.random.SeedSequence(seed).spawn(_N_IDENTITIES)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["identity", *[f"e{k}" for k in range(_DIMENSION)]])
        for i, name in enumerate(names):
            rows = mech.sample(i, _ROWS, np.random.default_rng(children[i]))
            for row in rows:
                writer.writerow([name, *(repr(float(v)) for v in row)])
    return {
        (names[i], names[j]): mech.exact_epsilon(i, j)
        for i in range(_N_IDENTITIES)
        for j in range(_N_IDENTITIES)
        if i != j
    }


def run_demo(out: Path, say: Callable[[str], None] = print) -> int:
    """Run the whole demo into ``out``; return the exit code (0)."""
    from certify import commands
    from certify.errors import ProtocolError

    start = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    table_path = out / "demo_table.csv"
    protocol_path = out / "demo_protocol.toml"
    ledger_path = out / "demo.ledger"
    record_path = out / "demo_record.json"
    for stale in (ledger_path, record_path):
        stale.unlink(missing_ok=True)
    protocol_path.write_text(DEMO_PROTOCOL, encoding="utf-8")
    say(f"writing the synthetic table {table_path} (Gaussian mechanism, epsilon_g = {_EPSILON_G:g})")
    exact = make_demo_table(table_path)

    print("\n== 1. inspect ==")
    commands.inspect_table(
        table_path=str(table_path), label_column="identity", no_normalize=True, dev_fraction=0.7,
        tests=5, confidence_level=0.95, delta=0.0,
    )
    print("\n== 2. pre-register on development rows ==")
    code = commands.preregister_file(
        protocol_path=str(protocol_path), data_path=str(table_path), ledger_path=str(ledger_path),
        out_path=str(record_path),
    )
    if code != 0:
        return code
    print("\n== 3. evaluate once on reserved rows ==")
    code = commands.evaluate_record(
        record_path=str(record_path), data_path=str(table_path), ledger_path=str(ledger_path),
        out=str(out / "evaluation"), claim_epsilon=None, claim_delta=None,
    )
    if code != 0:
        return code
    certs = json.loads((out / "evaluation" / "certificates.json").read_text())["certificates"]
    print("known answer (this table comes from a mechanism with known pairwise epsilon):")
    for c in certs:
        a, b = c["pair"]
        ref = exact[(a, b)]
        verdict = (
            "below the truth, as a valid bound must be" if c["epsilon_lower"] <= ref else "ABOVE THE TRUTH"
        )
        print(
            f"  {a}~{b}: certified epsilon_lower = {lower_bound_text(c['epsilon_lower'])} [Certificate]; "
            f"exact epsilon = {ref:.3f} [known reference] -> {verdict}"
        )
    print("\n== 4. a second evaluation of the same reserved rows is refused ==")
    try:
        commands.evaluate_record(
            record_path=str(record_path), data_path=str(table_path), ledger_path=str(ledger_path),
            out=str(out / "evaluation-again"), claim_epsilon=None, claim_delta=None,
        )
    except ProtocolError as exc:
        print(f"certify: refused: {exc}")
        print("(refused by the protocol; the command line exits with code 3)")
    else:  # pragma: no cover - the ledger always refuses a second evaluation
        print("SECOND EVALUATION WAS NOT REFUSED")
        return 1
    print("\n== 5. descriptive routes (no certificates) ==")
    commands.describe_table(
        table_path=str(table_path), label_column="identity", no_normalize=True, n_pairs=20, seed=0,
        methods="gauss_mech,kde_lr,mmd_tv,roc_oof,mmd_permutation", permutations=999,
        out=str(out / "describe"),
    )
    print("\n== 6. a small known-epsilon benchmark ==")
    from certify.benchmark.demo import run_small_benchmark

    run_small_benchmark(out / "benchmark", say=print)
    elapsed = time.perf_counter() - start
    print(
        f"\nreports: {out / 'evaluation' / 'evaluation.html'}, {out / 'describe' / 'describe.html'}, "
        f"{out / 'benchmark' / 'benchmark.html'}"
    )
    print(f"demo finished in {elapsed:.1f} s")
    return 0
