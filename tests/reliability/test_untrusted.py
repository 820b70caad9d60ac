"""Untrusted files are data only: no unpickling, no eval, no code named by a model file, no path escape.

Records are JSON, protocols TOML, results JSON/CSV/Parquet. A record may carry a scikit-learn model
as a skops file; these tests forge such files (custom classes, ``os.system``, ``builtins.eval`` as a
constructor) and re-hash the record, so that only the type check can stop them.
"""

from __future__ import annotations

import ast
import base64
import hashlib
import io
import json
import os
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression

from ..conftest import clustered_table

if TYPE_CHECKING:
    import certify as cf

PACKAGE = Path(__file__).resolve().parents[2] / "certify"

# Modules that deserialize code-bearing objects, and calls that run text as code.
FORBIDDEN_MODULES = {"pickle", "cPickle", "dill", "cloudpickle", "marshal", "shelve", "_pickle"}
# joblib is allowed for its process pool (Parallel, delayed), never for its file loader.
ALLOWED_FROM = {"joblib": {"Parallel", "delayed", "parallel_backend", "parallel_config"}}
FORBIDDEN_CALLS = {"eval", "exec", "compile", "__import__", "read_pickle", "load_pickle"}


def _python_files() -> list[Path]:
    """Every module of the package."""
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 20
    return files


@pytest.mark.slow
def test_package_never_unpickles_or_evaluates_file_content() -> None:
    """No module imports a pickle-like loader, calls eval/exec/compile, or allows pickled numpy arrays."""
    problems: list[str] = []
    for path in _python_files():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            where = f"{path.relative_to(PACKAGE.parent)}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] in FORBIDDEN_MODULES | set(ALLOWED_FROM):
                        problems.append(f"{where} imports {alias.name}")
            elif isinstance(node, ast.ImportFrom):
                top = (node.module or "").split(".")[0]
                if top in FORBIDDEN_MODULES:
                    problems.append(f"{where} imports from {node.module}")
                elif top in ALLOWED_FROM:
                    extra = {a.name for a in node.names} - ALLOWED_FROM[top]
                    if extra:
                        problems.append(f"{where} imports {sorted(extra)} from {node.module}")
            elif isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                if name in FORBIDDEN_CALLS:
                    problems.append(f"{where} calls {name}")
                for kw in node.keywords:
                    if kw.arg == "allow_pickle" and not (
                        isinstance(kw.value, ast.Constant) and kw.value.value is False
                    ):
                        problems.append(f"{where} passes allow_pickle")
                if name in ("load", "loads") and isinstance(func, ast.Attribute):
                    owner = func.value.id if isinstance(func.value, ast.Name) else ""
                    if owner in ("sio", "skops") and not any(kw.arg == "trusted" for kw in node.keywords):
                        problems.append(f"{where} loads a skops file without an explicit trusted list")
    assert problems == []


def test_the_scan_would_catch_a_pickle_load() -> None:
    """The scan is not vacuous: it flags a module that unpickles or evaluates text."""
    bad = (
        "import pickle\nfrom joblib import load\nx = eval(open('f').read())\nnp.load(p, allow_pickle=True)\n"
    )
    tree = ast.parse(bad)
    found = [type(n).__name__ for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
    calls = [n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    kws = [k.arg for n in ast.walk(tree) if isinstance(n, ast.Call) for k in n.keywords]
    assert found == ["Import", "ImportFrom"] and "eval" in calls and "allow_pickle" in kws


def test_skops_is_the_only_model_loader_and_checks_types_first() -> None:
    """The one place that loads a model computes the untrusted types and refuses before loading."""
    source = (PACKAGE / "protocol" / "scores.py").read_text(encoding="utf-8")
    body = source[source.index("def from_blob") : source.index("def score", source.index("def from_blob"))]
    assert body.index("get_untrusted_types") < body.index('raise RecordError(\n                f"the stored')
    assert body.index("if refused:") < body.index("sio.loads(")


# -- forged model files ---------------------------------------------------------------------------


class SentinelClassifier(ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """A classifier outside scikit-learn that counts how often it is revived from a file."""

    revived: ClassVar[int] = 0

    def fit(self, X: Any, y: Any) -> SentinelClassifier:
        """Fit a logistic regression inside."""
        self.inner_ = LogisticRegression().fit(X, y)
        self.classes_ = self.inner_.classes_
        return self

    def predict_proba(self, X: Any) -> Any:
        """Probabilities of the inner model."""
        return self.inner_.predict_proba(X)

    def __setstate__(self, state: dict[str, Any]) -> None:
        type(self).revived += 1
        self.__dict__.update(state)


def _sealed(
    seed: int, tmp: Path, estimator: object
) -> tuple[cf.EmbeddingTable, cf.Ledger, cf.SealedProtocol]:
    """A table unique to the test, and a protocol sealed with one test fitted with ``estimator``."""
    import certify as cf

    table = clustered_table(np.random.default_rng(seed), (16, 16), dimension=3)
    ledger = cf.Ledger(tmp / "audit.ledger")
    split = table.split(0.5, seed=0)
    protocol = cf.Protocol(name="untrusted")
    protocol.register(cf.FixedTest.fit(estimator, split.development, cf.Pair("id0", "id1"), folds=2))
    return table, ledger, protocol.seal(split.reserved, ledger=ledger)


def _with_blob(sealed: cf.SealedProtocol, ledger: cf.Ledger, blob: bytes) -> str:
    """The sealed record with its model replaced by ``blob``, every hash recomputed, stored in the ledger.

    This is what an attacker with write access to the record and the ledger could do: the record
    passes the hash check and the ledger lookup, so only the model's type check stands in the way.
    """
    from certify.protocol.record import _canonical

    content = json.loads(json.dumps(sealed.record.content))
    model = content["tests"][0]["model"]
    assert model["kind"] == "skops"
    model["data_base64"] = base64.b64encode(blob).decode("ascii")
    model["sha256"] = hashlib.sha256(blob).hexdigest()
    digest = hashlib.sha256(_canonical(content).encode()).hexdigest()
    text = json.dumps({**content, "sha256": digest})
    ledger.record_preregistration(digest, "forged", sealed.reserved_fingerprint, text)
    return text


def _edit_schema(blob: bytes, edit: Callable[[dict[str, Any]], dict[str, Any]]) -> bytes:
    """A skops file with its schema.json rewritten by ``edit`` (array members kept)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(blob)) as src, zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name == "schema.json":
                data = json.dumps(edit(json.loads(data))).encode()
            dst.writestr(name, data)
    return out.getvalue()


def test_record_with_a_custom_class_model_is_refused_before_anything_runs(seed: int, tmp_path: Path) -> None:
    """A model wrapping a class outside scikit-learn is refused with RecordError; it is never revived."""
    import skops.io as sio

    import certify as cf

    table, ledger, sealed = _sealed(seed, tmp_path, SentinelClassifier())
    blob = base64.b64decode(sealed.record.content["tests"][0]["model"]["data_base64"])
    SentinelClassifier.revived = 0
    with pytest.raises(cf.RecordError, match="not trusted") as info:
        cf.SealedProtocol.from_record(sealed.record.to_json(), table, ledger)
    assert "SentinelClassifier" in str(info.value)
    assert SentinelClassifier.revived == 0
    # control: trusting the type would revive the object, so the counter can see a load
    sio.loads(blob, trusted=sio.get_untrusted_types(data=blob))
    assert SentinelClassifier.revived == 1


def test_record_naming_os_system_is_refused(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A re-hashed record whose model file names ``os.system`` is refused; os.system is never called."""
    from sklearn.tree import DecisionTreeClassifier

    import certify as cf

    table, ledger, sealed = _sealed(seed, tmp_path, DecisionTreeClassifier(random_state=0))
    blob = base64.b64decode(sealed.record.content["tests"][0]["model"]["data_base64"])
    forged = _edit_schema(blob, lambda s: {**s, "__module__": "os", "__class__": "system"})
    calls: list[object] = []

    def fake_system(*args: object) -> int:
        calls.append(args)
        return 0

    monkeypatch.setattr(os, "system", fake_system)
    with pytest.raises(cf.RecordError, match=r"not trusted: \['os.system'") as info:
        cf.SealedProtocol.from_record(_with_blob(sealed, ledger, forged), table, ledger)
    assert "Only scikit-learn classes" in str(info.value)
    assert calls == []


def _constructor_call(module: str, name: str, argument: str) -> dict[str, Any]:
    """A skops schema asking the loader to call ``module.name(argument)``."""
    return {
        "__class__": name,
        "__module__": module,
        "__loader__": "ConstructorFromReduceNode",
        "content": {
            "__class__": "tuple",
            "__module__": "builtins",
            "__loader__": "TupleNode",
            "content": [
                {
                    "__class__": "str",
                    "__module__": "builtins",
                    "__loader__": "JsonNode",
                    "content": json.dumps(argument),
                    "is_json": True,
                    "__id__": 2,
                }
            ],
            "__id__": 3,
        },
        "__id__": 1,
        "protocol": 2,
        "_skops_version": "0.16.0",
    }


@pytest.mark.parametrize(
    ("module", "name"),
    [("builtins", "eval"), ("builtins", "exec"), ("numpy", "load"), ("sklearn.utils", "check_array")],
)
def test_record_whose_model_calls_a_function_on_load_is_refused(
    module: str, name: str, seed: int, tmp_path: Path
) -> None:
    """A model file asking skops to call a function (eval, exec, numpy.load, ...) is refused unexecuted.

    Builtins, numpy and even scikit-learn *functions* are refused: skops calls the named object
    with arguments taken from the file. The eval payload would create a file if it ever ran.
    """
    from sklearn.tree import DecisionTreeClassifier

    import certify as cf

    table, ledger, sealed = _sealed(seed, tmp_path, DecisionTreeClassifier(random_state=0))
    witness = tmp_path / "code-ran"
    payload = f"__import__('pathlib').Path({str(witness)!r}).touch()"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("schema.json", json.dumps(_constructor_call(module, name, payload)))
    forged = buf.getvalue()
    with pytest.raises(cf.RecordError, match=f"not trusted: \\['{module}.{name}'"):
        cf.SealedProtocol.from_record(_with_blob(sealed, ledger, forged), table, ledger)
    assert not witness.exists()


def test_scikit_learn_models_with_internal_types_still_load(seed: int, tmp_path: Path) -> None:
    """Models whose files name scikit-learn internal classes (trees, KD-trees) are still accepted."""
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.tree import DecisionTreeClassifier

    import certify as cf

    for i, estimator in enumerate((DecisionTreeClassifier(random_state=0), KNeighborsClassifier(3))):
        table, ledger, sealed = _sealed(seed + i, tmp_path / str(i), estimator)
        rebuilt = cf.SealedProtocol.from_record(sealed.record.to_json(), table, ledger)
        x = table.rows("id0")
        np.testing.assert_array_equal(rebuilt.tests[0].predict(x), sealed.tests[0].predict(x))


def test_model_bytes_that_do_not_match_their_hash_are_refused(seed: int, tmp_path: Path) -> None:
    """Swapping the model bytes without updating the model's own SHA-256 is refused."""
    from sklearn.tree import DecisionTreeClassifier

    import certify as cf
    from certify.protocol import FixedTest

    _, _, sealed = _sealed(seed, tmp_path, DecisionTreeClassifier(random_state=0))
    entry = json.loads(json.dumps(sealed.record.content["tests"][0]))
    entry["model"]["data_base64"] = base64.b64encode(b"PK\x03\x04 not the model").decode()
    with pytest.raises(cf.RecordError, match="do not match its SHA-256"):
        FixedTest.from_json(entry)


# -- report paths -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["../x.md", "a/../../x.md", "sub/../../../etc/passwd", "/etc/passwd", "//tmp/x", "..", "a\x00b"],
)
def test_safe_path_refuses_names_that_leave_the_folder(name: str, tmp_path: Path) -> None:
    """Relative escapes, absolute paths and NUL bytes are refused with DataError."""
    import certify as cf
    from certify.report import safe_path

    out = tmp_path / "report"
    out.mkdir()
    with pytest.raises(cf.DataError, match="output name"):
        safe_path(out, name)


def test_safe_path_refuses_symlinks_pointing_out(tmp_path: Path) -> None:
    """A symlinked folder or file inside the output folder that points outside is refused."""
    import certify as cf
    from certify.report import safe_path, write_atomic

    out, outside = tmp_path / "report", tmp_path / "outside"
    out.mkdir()
    outside.mkdir()
    (outside / "victim.md").write_text("keep")
    (out / "linked-dir").symlink_to(outside, target_is_directory=True)
    (out / "evaluation.md").symlink_to(outside / "victim.md")
    for name in ("linked-dir/x.md", "linked-dir/victim.md", "evaluation.md"):
        with pytest.raises(cf.DataError, match="would leave the output folder"):
            safe_path(out, name)
    (out / "loop").symlink_to(out / "loop")
    with pytest.raises(cf.DataError):
        write_atomic(safe_path(out, "loop/x.md"), "x")
    assert (outside / "victim.md").read_text() == "keep"
    assert sorted(p.name for p in outside.iterdir()) == ["victim.md"]


def test_safe_path_accepts_names_inside(tmp_path: Path) -> None:
    """Plain names and subfolders stay inside and resolve beneath the folder."""
    from certify.report import safe_path

    out = tmp_path / "report"
    for name in ("evaluation.md", "figures/a.png", "a/../b.md"):
        target = safe_path(out, name)
        assert out.resolve() in target.parents


def test_report_figure_captions_cannot_name_paths(tmp_path: Path) -> None:
    """A figure caption full of path syntax becomes a plain file name inside the folder."""
    from certify.report import write_report

    out = tmp_path / "report"
    md, html = write_report(out, "r", "# t\n\n![../../evil](../../evil)\n", [("../../evil/..", b"\x89PNG")])
    assert {p.name for p in out.iterdir()} == {"evil.png", "r.md", "r.html"}
    assert md.parent == html.parent == out.resolve()
    assert not (tmp_path / "evil.png").exists()
