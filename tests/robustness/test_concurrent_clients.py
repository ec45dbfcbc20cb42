"""Clients uploading, deleting and asking (naive, ppr, a2rag) across SQLite workspaces at once, against
one `thinkgraph serve` with two worker processes: every acknowledged write is present exactly once,
no answer cites another workspace, no request fails. (benchmarks/robustness.py: 50 clients, a minute.)"""

from __future__ import annotations

import os
from pathlib import Path

from service_scenario import check_final, run_clients, servers
from thinkgraph.service.workspaces import INDEX_FILE

LONG = bool(os.environ.get("THINKGRAPH_ROBUSTNESS_LONG"))
CLIENTS = 50 if LONG else 8
SECONDS = 60.0 if LONG else 8.0


def test_clients_racing_on_sqlite_workspaces_lose_nothing(tmp_path: Path) -> None:
    config = tmp_path / "tg.toml"
    config.write_text('[embedding]\nprovider = "hashing"\ndim = 64\n[index]\nextractor = "nolm"\n', "utf-8")
    root = tmp_path / "ws"
    with servers(None, config, count=1, root=root, workers=2) as urls:
        tally = run_clients(urls, ["alpha", "beta"], CLIENTS, SECONDS)
        problems = check_final(lambda ws: str(root / ws / INDEX_FILE), urls, tally)
    assert problems == []
    counts = tally.summary()
    assert counts["upload"]["count"] >= 5 and counts["ask"]["count"] >= 3
