"""Opening one new SQLite index from several processes at once: each gets the index, none a
"database is locked" error (SQLite can refuse the switch to WAL without waiting for the busy timeout)."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from thinkgraph.store.sqlite import SQLiteStore
from thinkgraph.store.sqlite_connect import enter_wal

ROUNDS = 25
OPENERS = 3


def _open_when_released(path: str, barrier: multiprocessing.synchronize.Barrier,
                        results: multiprocessing.Queue) -> None:
    barrier.wait()
    try:
        SQLiteStore(path).close()
        results.put("ok")
    except Exception as exc:  # reported to the parent, which fails the test with it
        results.put(f"{type(exc).__name__}: {exc}")


def test_processes_opening_one_new_index_together_all_succeed(tmp_path: Path) -> None:
    # before the retry about a third of such rounds had one opener fail, so 25 rounds catch it
    context = multiprocessing.get_context("fork")
    failures: list[str] = []
    for round_no in range(ROUNDS):
        path = str(tmp_path / f"new{round_no}.db")
        barrier, results = context.Barrier(OPENERS), context.Queue()
        openers = [context.Process(target=_open_when_released, args=(path, barrier, results)) for _ in range(OPENERS)]
        for opener in openers:
            opener.start()
        for opener in openers:
            opener.join(timeout=120)
        failures += [r for r in (results.get(timeout=5) for _ in openers) if r != "ok"]
    assert failures == []
    store = SQLiteStore(tmp_path / "new0.db", create=False)
    store.close()
    with sqlite3.connect(tmp_path / "new0.db") as check:
        assert check.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_enter_wal_gives_up_after_the_busy_timeout_with_the_lock_error(tmp_path: Path) -> None:
    path = tmp_path / "held.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t(x)")
    holder.execute("BEGIN EXCLUSIVE")
    waiter = sqlite3.connect(path, isolation_level=None, timeout=0.05)
    try:
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            enter_wal(waiter, busy_timeout_s=0.3)
        holder.execute("COMMIT")
        enter_wal(waiter, busy_timeout_s=0.3)
        assert waiter.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        waiter.close()
        holder.close()


def _folder_unwritable(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """What a read-only mount looks like to os.access (the tests run as root, whom chmod does not stop)."""
    import os

    real = os.access

    def access(path: object, mode: int, *args: object, **kwargs: object) -> bool:
        if mode & os.W_OK and Path(str(path)).resolve() in (folder.resolve(), *folder.resolve().glob("*")):
            return False
        return real(path, mode)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "access", access)


def test_an_index_in_a_read_only_folder_is_read_as_immutable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from thinkgraph.models import Node

    folder = tmp_path / "snapshot"
    folder.mkdir()
    store = SQLiteStore(folder / "k.db")
    store.add_nodes([Node("ent:1", "entity", "Adela Morrow")])
    store.close()
    _folder_unwritable(monkeypatch, folder)
    reader = SQLiteStore(folder / "k.db", create=False)
    assert reader.read_only and reader.get_node("ent:1") is not None
    reader.close()
    assert sorted(p.name for p in folder.iterdir()) == ["k.db"]  # nothing written beside it


def test_writing_in_a_read_only_folder_names_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from thinkgraph.errors import IndexFileError
    from thinkgraph.store import sqlite as sqlite_module

    folder = tmp_path / "mounted"
    folder.mkdir()
    _folder_unwritable(monkeypatch, folder)

    def refuse(*args: object, **kwargs: object) -> sqlite3.Connection:
        raise sqlite3.OperationalError("unable to open database file")  # what SQLite says there

    monkeypatch.setattr(sqlite_module, "connect_index", refuse)
    with pytest.raises(IndexFileError, match="folder .*mounted is read-only"):
        SQLiteStore(folder / "new.db")


def test_an_index_from_before_the_edge_lookups_is_upgraded_by_a_writer_only(tmp_path) -> None:  # noqa: ANN001
    import sqlite3

    from thinkgraph.models import Edge
    from thinkgraph.store.sqlite import SQLiteStore

    def indexes(path: object) -> set[str]:
        with sqlite3.connect(str(path)) as db:
            rows = db.execute("SELECT name FROM sqlite_master WHERE type='index' AND name LIKE 'edges%'")
            return {r[0] for r in rows}

    path = tmp_path / "old.db"
    store = SQLiteStore(path)
    assert store.upgrade_indexes() == []  # a new index has them from the start
    store.add_edges([Edge("a", "b", "CO_OCCURS")])
    store.close()
    assert indexes(path) == {"edges_src_dst", "edges_dst_src", "edges_type"}
    with sqlite3.connect(str(path)) as db:  # the layout an earlier version wrote
        db.executescript("DROP INDEX edges_src_dst; DROP INDEX edges_dst_src; "
                         "CREATE INDEX edges_src ON edges(src, type); CREATE INDEX edges_dst ON edges(dst, type);")
    reader = SQLiteStore(path, read_only=True)
    assert reader.upgrade_indexes() == [] and reader.edges_between([("a", "b")])  # correct, only slower
    reader.close()
    writer = SQLiteStore(path)
    assert indexes(path) == {"edges_src", "edges_dst", "edges_type"}  # opening alone changes nothing
    assert writer.upgrade_indexes() == ["edges_src_dst", "edges_dst_src"]
    assert indexes(path) == {"edges_src_dst", "edges_dst_src", "edges_type"}
    assert [(e.src, e.dst) for e in writer.edges_between([("b", "a")])] == [("a", "b")]
    writer.close()
