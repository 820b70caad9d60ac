"""Shared fixtures: per-test seeds, synthetic embedding tables, ledgers and sealed audits.

certify is imported inside the helpers, not at module level: this file is loaded before
typeguard's pytest plugin installs its import hook, and an early import would leave the library
unchecked under ``pytest --typeguard-packages=certify``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
import pytest

if TYPE_CHECKING:
    import certify as cf

TableFactory: TypeAlias = "Callable[..., cf.EmbeddingTable]"


def stable_seed(text: str) -> int:
    """A 32-bit seed derived from text, identical on every run and platform."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")


def clustered_table(
    rng: np.random.Generator,
    counts: Sequence[int],
    *,
    dimension: int = 6,
    separation: float = 10.0,
    noise: float = 0.05,
    centers: Sequence[int] | None = None,
) -> cf.EmbeddingTable:
    """Identities ``id0, id1, ...`` with ``counts[i]`` rows around well separated centres.

    Identity ``i`` sits at ``separation * e_{centers[i]}`` (default ``e_i``) plus Gaussian noise of
    scale ``noise``; with the defaults two centres are ~14 units apart against noise 0.05, so any
    sensible test makes no error. Identities given the same centre overlap.
    """
    import certify as cf

    where = list(range(len(counts))) if centers is None else list(centers)
    labels: list[str] = []
    blocks = []
    for i, n in enumerate(counts):
        centre = np.zeros(dimension)
        centre[where[i] % dimension] = separation
        blocks.append(centre + noise * rng.standard_normal((n, dimension)))
        labels.extend([f"id{i}"] * n)
    return cf.EmbeddingTable.from_arrays(labels, np.vstack(blocks), normalize=False)


@pytest.fixture(autouse=True)
def _default_ledger_in_tmp(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Mechanism audits without a ledger write to a temporary default ledger, never the home folder."""
    monkeypatch.setenv("CERTIFY_LEDGER", str(tmp_path_factory.mktemp("ledger") / "default.ledger"))


@pytest.fixture
def seed(request: pytest.FixtureRequest) -> int:
    """A seed unique to the test (its node id), so no two tests share reserved data."""
    return stable_seed(request.node.nodeid)


@pytest.fixture
def rng(seed: int) -> np.random.Generator:
    """A generator seeded from the test's node id."""
    return np.random.default_rng(seed)


@pytest.fixture
def make_table(rng: np.random.Generator) -> TableFactory:
    """Factory of clustered tables drawn from the test's generator (each call gives new rows)."""

    def make(counts: Sequence[int] = (40, 40, 40, 40), **kwargs: Any) -> cf.EmbeddingTable:
        return clustered_table(rng, counts, **kwargs)

    return make


@pytest.fixture
def ledger(tmp_path: Path) -> cf.Ledger:
    """A fresh ledger file in the test's temporary folder."""
    import certify as cf

    return cf.Ledger(tmp_path / "audit.ledger")


def seal_tests(
    table: cf.EmbeddingTable,
    ledger: cf.Ledger,
    pairs: Sequence[cf.Pair],
    *,
    dev_fraction: float = 0.5,
    split_seed: int = 0,
    name: str = "audit",
    confidence_level: float = 0.95,
    delta: float = 0.0,
    family_size: int | None = None,
) -> tuple[cf.DevTestSplit, cf.SealedProtocol]:
    """Split, fit the default logistic test for each pair on development data, register, seal."""
    import certify as cf

    split = table.split(dev_fraction=dev_fraction, seed=split_seed)
    protocol = cf.Protocol(
        name=name, confidence_level=confidence_level, delta=delta, family_size=family_size
    )
    for pair in pairs:
        protocol.register(cf.FixedTest.fit(None, split.development, pair))
    return split, protocol.seal(split.reserved, ledger=ledger)


@pytest.fixture(scope="session")
def family(tmp_path_factory: pytest.TempPathFactory) -> cf.CertificateFamily:
    """A two-member family at 95%: id0~id1 never errs (1.277 at 30 per class), id2~id3 overlap."""
    import certify as cf

    rng = np.random.default_rng(stable_seed("session family"))
    table = clustered_table(rng, (60, 60, 60, 60), centers=(0, 1, 2, 2), noise=1.0)
    ledger = cf.Ledger(tmp_path_factory.mktemp("family") / "audit.ledger")
    pairs = (cf.Pair("id0", "id1"), cf.Pair("id2", "id3"))
    _, sealed = seal_tests(table, ledger, pairs, name="family", family_size=40)
    return sealed.evaluate()


@pytest.fixture(scope="session")
def other_family(tmp_path_factory: pytest.TempPathFactory) -> cf.CertificateFamily:
    """An independent one-member family at 90% (another table, another protocol)."""
    import certify as cf

    rng = np.random.default_rng(stable_seed("session other family"))
    table = clustered_table(rng, (30, 30))
    ledger = cf.Ledger(tmp_path_factory.mktemp("other") / "audit.ledger")
    pairs = (cf.Pair("id0", "id1"),)
    _, sealed = seal_tests(table, ledger, pairs, name="other", confidence_level=0.9)
    return sealed.evaluate()
