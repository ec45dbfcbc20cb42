"""Opening an SQLite index file: the connection, its pragmas, and switching a new file to WAL safely
while other processes open it too."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

BUSY_TIMEOUT_S = 60.0
# SQLite's page cache of a writing connection, in KiB (ours). Every row is keyed by a content hash, so
# inserts land at random pages of the tables' indexes; with SQLite's default 2 MiB most of them are
# read back from the OS on each insert once an index outgrows it (extraction per passage slowed from
# 1.6 to 2.4 ms between 100k and 1M passages). The cache fills only as pages are used.
WRITER_CACHE_KIB = 262_144
_WAL_RETRY_FIRST_S = 0.005
_WAL_RETRY_MAX_S = 0.2


def connect_index(path: Path, *, read_only: bool, busy_timeout_s: float = BUSY_TIMEOUT_S) -> sqlite3.Connection:
    """A connection for one thread-shared store; writable ones are in WAL mode with synchronous=NORMAL.

    A generous busy timeout: several service workers or index runs may write one index at once."""
    target = f"file:{path}?mode=ro" if read_only else str(path)
    if read_only and not os.access(path.parent, os.W_OK):
        # a read-only folder (a mounted snapshot, a CD): SQLite cannot make the WAL's shared-memory file
        # beside the index, so it may only read the file as immutable (nobody can write it there either)
        target += "&immutable=1"
    db = sqlite3.connect(target, check_same_thread=False, isolation_level=None, timeout=busy_timeout_s,
                         uri=read_only)
    try:
        if not read_only:
            enter_wal(db, busy_timeout_s)
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(f"PRAGMA cache_size=-{WRITER_CACHE_KIB}")
        db.execute("PRAGMA foreign_keys=OFF")
    except BaseException:
        db.close()
        raise
    return db


def enter_wal(db: sqlite3.Connection, busy_timeout_s: float) -> None:
    """``PRAGMA journal_mode=WAL``, retried while another connection holds the lock.

    When processes open a new file together, the switch to WAL can fail with "database is locked"
    at once, without waiting out the busy timeout (reproduced: 50 of 450 openings by three racing
    processes; CI saw it as a failed `index` run). The retry waits with a growing pause, up to the
    busy timeout."""
    deadline = time.monotonic() + busy_timeout_s
    pause = _WAL_RETRY_FIRST_S
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, _WAL_RETRY_MAX_S)
