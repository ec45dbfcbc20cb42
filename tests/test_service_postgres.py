"""Two `thinkgraph serve` processes on different ports over one PostgreSQL database (each workspace
its own schema), with concurrent clients uploading, deleting and asking across workspaces: every
acknowledged write is present exactly once afterwards and no answer cites another workspace."""

from __future__ import annotations

from pathlib import Path

import httpx

from service_scenario import check_final, postgres_workspace, run_clients, servers

CLIENTS = 9
SECONDS = 8.0
MINIMUM = {"upload": 10, "delete": 2, "ask": 5}  # requests made before the clients stop, however loaded the machine


def test_two_servers_over_one_database_lose_nothing(pg_url, tmp_path: Path) -> None:  # noqa: ANN001
    store_url = pg_url("svc")
    config = tmp_path / "tg.toml"
    config.write_text('[embedding]\nprovider = "hashing"\ndim = 64\n[index]\nextractor = "nolm"\n', "utf-8")
    with servers(store_url, config) as urls:
        tally = run_clients(urls, ["alpha", "beta", "gamma"], CLIENTS, SECONDS, minimum=MINIMUM)
        problems = check_final(postgres_workspace(store_url), urls, tally)
        listed = [httpx.get(f"{url}/v1/workspaces", timeout=30).json() for url in urls]
    assert problems == []
    assert listed == [["alpha", "beta", "gamma"]] * 2
    counts = tally.summary()
    assert all(counts[kind]["count"] >= n for kind, n in MINIMUM.items()), counts
    assert sum(len(docs) for docs in tally.live.values()) > 0
