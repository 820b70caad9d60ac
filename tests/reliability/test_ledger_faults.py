"""The ledger under load and faults: racing processes, SIGKILL mid-evaluation, corrupted files, locks.

Workers run in forked processes (spawn where fork is missing) and rebuild everything from the
record JSON, the table and the ledger path, as another process of a real audit would.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from numpy.typing import NDArray

from ..conftest import clustered_table

if TYPE_CHECKING:
    import certify as cf

PAIR_NAMES = ("id0", "id1")
N_RACERS = 16
ROW_KEYS_PER_SPEND = 200


def context() -> Any:
    """A multiprocessing context: fork where available (fast), else spawn."""
    return mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")


def difference_score(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """A fixed score separating id0 (first axis) from id1 (second axis)."""
    out: NDArray[np.float64] = x[:, 1] - x[:, 0]
    return out


def _sealed_record(table: cf.EmbeddingTable, ledger: cf.Ledger, name: str, *, function: bool) -> str:
    """Split, fix one test on development data (logistic or a score function), seal; the record JSON."""
    import certify as cf

    split = table.split(0.5, seed=0)
    pair = cf.Pair(*PAIR_NAMES)
    protocol = cf.Protocol(name=name)
    if function:
        protocol.register(cf.FixedTest.from_score(difference_score, split.development, pair, name="slow"))
    else:
        protocol.register(cf.FixedTest.fit(None, split.development, pair, folds=3))
    sealed = protocol.seal(split.reserved, ledger=ledger)
    return sealed.record.to_json()


# -- 16 processes race -----------------------------------------------------------------------------


def _race_worker(record_json: str, table: cf.EmbeddingTable, path: str, barrier: Any, results: Any) -> None:
    """Rebuild the sealed protocol from its record, wait for the others, evaluate once."""
    import certify as cf

    sealed = cf.SealedProtocol.from_record(record_json, table, cf.Ledger(path))
    barrier.wait(timeout=60)
    try:
        sealed.evaluate()
        results.put(("ok", os.getpid(), ""))
    except cf.ReservedSplitReusedError as exc:
        results.put(("reused", os.getpid(), str(exc)))
    except BaseException as exc:  # reported so a failure shows what happened
        results.put(("error", os.getpid(), repr(exc)))


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_sixteen_processes_race_and_exactly_one_evaluates(rng: np.random.Generator, tmp_path: Path) -> None:
    """16 processes evaluate one sealed record at once: one succeeds, 15 get ReservedSplitReusedError."""
    import certify as cf

    table = clustered_table(rng, (30, 30))
    ledger = cf.Ledger(tmp_path / "audit.ledger")
    record_json = _sealed_record(table, ledger, "race16", function=False)
    ctx = context()
    barrier, results = ctx.Barrier(N_RACERS), ctx.Queue()
    procs = [
        ctx.Process(target=_race_worker, args=(record_json, table, str(ledger.path), barrier, results))
        for _ in range(N_RACERS)
    ]
    for p in procs:
        p.start()
    outcomes = [results.get(timeout=120) for _ in range(N_RACERS)]
    for p in procs:
        p.join(timeout=60)
    kinds = sorted(o[0] for o in outcomes)
    assert kinds == ["ok"] + ["reused"] * (N_RACERS - 1), outcomes
    winner = next(pid for kind, pid, _ in outcomes if kind == "ok")
    entries = cf.Ledger(ledger.path).entries()
    assert len(entries) == 1
    assert entries[0].pid == winner and entries[0].status == "completed"
    for kind, _, message in outcomes:
        if kind == "reused":
            assert "'race16'" in message and entries[0].spent_at in message


# -- SIGKILL at random points -----------------------------------------------------------------------


def _kill_worker(record_json: str, table: cf.EmbeddingTable, path: str, marker: str, nap: float) -> None:
    """Evaluate with a score function that leaves a marker, then sleeps ``nap`` seconds per call."""
    import certify as cf

    def slow(x: NDArray[np.float64]) -> NDArray[np.float64]:
        Path(marker).touch()
        time.sleep(nap)
        return difference_score(x)

    cf.SealedProtocol.from_record(
        record_json, table, cf.Ledger(path), score_functions={"slow": slow}
    ).evaluate()


def _wait_for_entry(ledger: cf.Ledger, fingerprint: str, proc: Any, limit: float = 60.0) -> None:
    """Poll until the ledger shows the split as spent (or the process ended)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and proc.is_alive():
        if ledger.entry(fingerprint) is not None:
            return
        time.sleep(0.005)


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_sigkill_at_random_points_leaves_ledger_readable_and_split_spent(
    rng: np.random.Generator, tmp_path: Path
) -> None:
    """Evaluations killed (SIGKILL) at random points leave a readable ledger; scored splits stay spent.

    Half of the kills come a random delay after the split is marked spent (during scoring); the
    other half a random delay after process start (possibly inside the ledger transaction). The
    invariant checked after each: the ledger opens and lists its entries, and if any reserved row
    was scored the split is spent and a retry is refused naming the killed process.
    """
    import certify as cf

    path = tmp_path / "audit.ledger"
    ledger = cf.Ledger(path)
    ctx = context()
    n_kills = 10
    scored_and_spent = 0
    for i in range(n_kills):
        table = clustered_table(rng, (20, 20))
        record_json = _sealed_record(table, ledger, f"killed-{i}", function=True)
        fingerprint = table.split(0.5, seed=0).reserved.fingerprint
        marker = tmp_path / f"scored-{i}"
        nap = float(rng.uniform(0.3, 0.8))  # two calls: the worker lives >= 0.6 s after spending
        proc = ctx.Process(target=_kill_worker, args=(record_json, table, str(path), str(marker), nap))
        proc.start()
        if i % 2 == 0:
            _wait_for_entry(ledger, fingerprint, proc)
            time.sleep(float(rng.uniform(0.0, 0.5)))
        else:
            time.sleep(float(rng.uniform(0.0, 0.15)))
        assert proc.pid is not None and proc.is_alive(), f"kill {i}: the worker ended before the kill"
        os.kill(proc.pid, signal.SIGKILL)
        proc.join(timeout=30)
        assert proc.exitcode == -signal.SIGKILL
        reopened = cf.Ledger(path)
        entries = {e.reserved_fingerprint: e for e in reopened.entries()}
        with sqlite3.connect(path) as con:
            assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        entry = entries.get(fingerprint)
        if marker.exists():  # a reserved row was scored, so the split must already be spent
            assert entry is not None and entry.status == "started" and entry.pid == proc.pid
            scored_and_spent += 1
        retry = cf.SealedProtocol.from_record(
            record_json, table, reopened, score_functions={"slow": difference_score}
        )
        if entry is None:  # killed before the spend committed: the split is fresh, evaluable once
            assert not marker.exists()
            retry.evaluate()
        else:
            with pytest.raises(cf.ReservedSplitReusedError, match=f"pid {proc.pid}"):
                retry.evaluate()
    print(f"\n{n_kills} kills: {scored_and_spent} during scoring (split spent), the rest before it")
    # every kill that waited for the spend landed while rows were being scored
    assert scored_and_spent >= n_kills // 2


def _spend_loop(path: str, start: int) -> None:
    """Spend fake splits with their row keys in a tight loop until killed."""
    import certify as cf

    ledger = cf.Ledger(path)
    for i in range(start, start + 100_000):
        keys = [f"row-{i}-{j}" for j in range(ROW_KEYS_PER_SPEND)]
        ledger.spend(f"split-{i:08d}", "record", "loop", keys)


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_sigkill_inside_spend_transactions_never_leaves_half_a_spend(
    rng: np.random.Generator, tmp_path: Path
) -> None:
    """Killing a process that spends in a loop never leaves a split without all of its row keys."""
    import certify as cf

    path = tmp_path / "audit.ledger"
    cf.Ledger(path)
    ctx = context()
    entries: list[cf.LedgerEntry] = []
    for k in range(8):
        proc = ctx.Process(target=_spend_loop, args=(str(path), k * 100_000))
        proc.start()
        time.sleep(float(rng.uniform(0.05, 0.4)))
        assert proc.pid is not None
        os.kill(proc.pid, signal.SIGKILL)
        proc.join(timeout=30)
        reopened = cf.Ledger(path)  # the chain checks out: every entry is whole and linked
        entries = reopened.entries()
        with sqlite3.connect(path) as con:
            assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        per_split = {fp: s.reserved_keys.shape[0] for fp, s in reopened._read().spends.items()}
        assert set(per_split) == {e.reserved_fingerprint for e in entries}
        assert set(per_split.values()) <= {ROW_KEYS_PER_SPEND}
    print(f"\n8 kills inside a spend loop: {len(entries)} complete spends, no partial one")
    assert len(entries) > 0


# -- corrupted and truncated files -------------------------------------------------------------------


def _filled_ledger(path: Path) -> bytes:
    """A ledger with a few preregistrations and spent splits; its bytes."""
    import certify as cf

    ledger = cf.Ledger(path)
    for i in range(40):
        ledger.record_preregistration(f"rec-{i}", "p", f"split-{i}", "{}" * 200)
        ledger.spend(f"split-{i}", f"rec-{i}", "p", [f"row-{i}-{j}" for j in range(50)])
    return path.read_bytes()


def _truncate(fraction: float) -> Any:
    """Corruption: keep the first ``fraction`` of the file."""
    return lambda b: b[: max(1, int(len(b) * fraction))]


def _overwrite(start: float, length: int) -> Any:
    """Corruption: overwrite ``length`` bytes from a relative position with a fixed pattern."""

    def corrupt(b: bytes) -> bytes:
        i = int(len(b) * start)
        return b[:i] + bytes([0xA5]) * length + b[i + length :]

    return corrupt


CORRUPTIONS = {
    "truncated-to-100-bytes": lambda b: b[:100],
    "truncated-to-one-page": lambda b: b[:4096],
    "truncated-to-half": _truncate(0.5),
    "last-page-cut-off": lambda b: b[:-4096],
    "header-overwritten": lambda b: bytes(16) + b[16:],
    "schema-page-overwritten": lambda b: b[:100] + bytes([0xA5]) * 3000 + b[3100:],
    "random-bytes": lambda b: np.random.default_rng(7).bytes(len(b)),
    "text-file": lambda b: b"identity,x0\n" * 400,
}


@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
def test_corrupted_ledger_raises_and_is_never_recreated(corruption: str, tmp_path: Path) -> None:
    """A corrupted or truncated ledger gives LedgerError on open or on reading; its bytes never change."""
    import certify as cf

    path = tmp_path / "audit.ledger"
    bad = CORRUPTIONS[corruption](_filled_ledger(path))
    path.write_bytes(bad)
    with pytest.raises(cf.LedgerError):
        cf.Ledger(path, timeout=0.5).entries()
    assert path.read_bytes() == bad
    assert sorted(p.name for p in tmp_path.iterdir()) == ["audit.ledger"]


def test_ledger_corrupted_after_sealing_fails_before_any_row_is_read(
    rng: np.random.Generator, tmp_path: Path
) -> None:
    """If the ledger is damaged between sealing and evaluation, evaluate raises LedgerError unscored."""
    import certify as cf

    calls: list[int] = []
    sealed = _sealed_with_counter(rng, cf.Ledger(tmp_path / "audit.ledger"), calls)
    damaged = (tmp_path / "audit.ledger").read_bytes()[:1000]
    (tmp_path / "audit.ledger").write_bytes(damaged)
    with pytest.raises(cf.LedgerError):
        sealed.evaluate()
    assert calls == []
    assert (tmp_path / "audit.ledger").read_bytes() == damaged


# -- locked / unwritable ledgers ---------------------------------------------------------------------


def _sealed_with_counter(rng: np.random.Generator, ledger: cf.Ledger, calls: list[int]) -> cf.SealedProtocol:
    """A sealed one-test protocol whose score function records every call made after sealing."""
    import certify as cf

    def score(x: NDArray[np.float64]) -> NDArray[np.float64]:
        calls.append(len(x))
        return difference_score(x)

    table = clustered_table(rng, (20, 20))
    split = table.split(0.5, seed=0)
    protocol = cf.Protocol(name="counted")
    protocol.register(cf.FixedTest.from_score(score, split.development, cf.Pair(*PAIR_NAMES), name="c"))
    sealed = protocol.seal(split.reserved, ledger=ledger)
    calls.clear()
    return sealed


def _hold_lock(path: str, mode: str, ready: Any, release: Any) -> None:
    """Hold a SQLite lock on the ledger from another process until told to release it."""
    con = sqlite3.connect(path, isolation_level=None)
    con.execute(f"BEGIN {mode}")
    ready.set()
    release.wait(timeout=60)
    con.execute("ROLLBACK")
    con.close()


@pytest.mark.parametrize("mode", ["EXCLUSIVE", "IMMEDIATE"])
@pytest.mark.timeout(120)
def test_locked_ledger_fails_before_any_row_is_read_then_recovers(
    mode: str, rng: np.random.Generator, tmp_path: Path
) -> None:
    """A ledger another process keeps from being written gives LedgerError, unscored; later it works.

    ``EXCLUSIVE`` blocks reads and writes; ``IMMEDIATE`` lets reads through but no write (a ledger
    that is readable, not writable). Either way no reserved row is scored and nothing is spent.
    """
    import certify as cf

    path = tmp_path / "audit.ledger"
    calls: list[int] = []
    sealed = _sealed_with_counter(rng, cf.Ledger(path, timeout=0.3), calls)
    ctx = context()
    ready, release = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold_lock, args=(str(path), mode, ready, release))
    holder.start()
    try:
        assert ready.wait(timeout=30)
        with pytest.raises(cf.LedgerError, match="cannot be used"):
            sealed.evaluate()
        assert calls == []
    finally:
        release.set()
        holder.join(timeout=30)
    assert cf.Ledger(path).entry(sealed.reserved_fingerprint) is None
    family = sealed.evaluate()  # the failed attempt spent nothing, so the one evaluation still happens
    assert len(family.certificates) == 1 and calls == [10, 10]


def test_ledger_under_a_regular_file_is_refused_and_the_file_untouched(tmp_path: Path) -> None:
    """A ledger path below a regular file (an unwritable location even for root) raises LedgerError."""
    import certify as cf

    blocker = tmp_path / "not-a-folder"
    blocker.write_bytes(b"precious")
    for path in (blocker / "audit.ledger", blocker / "deeper" / "audit.ledger"):
        with pytest.raises(cf.LedgerError):
            cf.Ledger(path)
    assert blocker.read_bytes() == b"precious"
