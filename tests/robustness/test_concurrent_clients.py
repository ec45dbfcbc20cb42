"""Clients uploading, deleting and asking (naive, ppr, a2rag) across SQLite workspaces at once, against
one `thinkgraph serve` with two worker processes: every acknowledged write is present exactly once,
no answer cites another workspace, no request fails. (benchmarks/robustness.py: 50 clients, a minute.)"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from service_scenario import check_final, run_clients, servers
from thinkgraph.service.workspaces import INDEX_FILE

LONG = bool(os.environ.get("THINKGRAPH_ROBUSTNESS_LONG"))
CLIENTS = 50 if LONG else 8
SECONDS = 60.0 if LONG else 8.0
MINIMUM = {"upload": 5, "ask": 3}  # requests made before the clients stop, however loaded the machine


def test_clients_racing_on_sqlite_workspaces_lose_nothing(tmp_path: Path, figures: Callable[..., None]) -> None:
    config = tmp_path / "tg.toml"
    config.write_text('[embedding]\nprovider = "hashing"\ndim = 64\n[index]\nextractor = "nolm"\n', "utf-8")
    root = tmp_path / "ws"
    with servers(None, config, count=1, root=root, workers=2) as urls:
        tally = run_clients(urls, ["alpha", "beta"], CLIENTS, SECONDS, minimum=MINIMUM)
        problems = check_final(lambda ws: str(root / ws / INDEX_FILE), urls, tally)
    counts = tally.summary()
    store_problems = len(problems) - len(tally.problems)  # end state: documents missing, extra or doubled
    figures(f"{CLIENTS} clients upload/delete/ask for {SECONDS:.0f} s (serve --workers 2)",
            runs=sum(int(c["count"]) for c in counts.values()), lost=store_problems, http_500=tally.server_errors,
            foreign_citations=tally.foreign_citations,
            failed_requests=len(tally.problems) - tally.foreign_citations)
    assert problems == []
    assert all(counts[kind]["count"] >= n for kind, n in MINIMUM.items()), counts
