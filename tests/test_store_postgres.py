"""What only the PostgreSQL store has: URLs and credentials (never shown), one schema per index,
non-blocking claims, concurrent writers in several processes, and `thinkgraph copy` both ways."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from typer.testing import CliRunner, Result

from support import FIXTURES, HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.cli import app
from thinkgraph.errors import ConfigError, IndexFileError, StoreUnavailableError
from thinkgraph.models import Node
from thinkgraph.store import open_store
from thinkgraph.store.base import SECTIONS
from thinkgraph.store.factory import index_exists, list_indexes, parse, shown_location
from thinkgraph.store.pg_location import parse_location
from thinkgraph.store.postgres import PostgresStore
from thinkgraph.store.sqlite import SQLiteStore

SECRET = "s3cr%40t-pw"  # "s3cr@t-pw", percent-encoded in the URL


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "tg.toml"
    path.write_text('[embedding]\nprovider = "hashing"\ndim = 64\n[index]\nextractor = "nolm"\n', "utf-8")
    return path


def _cli(*args: str, config: Path) -> subprocess.CompletedProcess[str]:
    """The real entry point, in a process of its own."""
    return subprocess.run([sys.executable, "-m", "thinkgraph", "-c", str(config), *args], capture_output=True,
                          text=True, timeout=300)


def _run(*args: str, config: Path) -> Result:
    """The CLI app in this process (the same commands, without a process start per call)."""
    return CliRunner().invoke(app, ["-c", str(config), *args])


def test_the_url_scheme_chooses_the_backend(tmp_path: Path) -> None:
    assert isinstance(parse(str(tmp_path / "x.db")), Path)
    assert parse("sqlite:///tmp/x.db") == Path("/tmp/x.db")
    assert parse("C:\\indexes\\x.db") == Path("C:\\indexes\\x.db")  # a drive letter is no URL scheme
    assert parse("postgresql://u@h/db?schema=ws1").schema == "ws1"
    assert parse("postgres://u@h/db").schema == "thinkgraph"
    assert isinstance(parse(str(tmp_path / "postgresql-notes.db")), Path)  # a name, not a scheme
    with pytest.raises(ConfigError, match="unsupported index URL scheme 'mysql'"):
        parse("mysql://u@h/db")
    with pytest.raises(ConfigError, match="schema name"):
        parse("postgresql://u@h/db?schema=bad;drop")


def test_passwords_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    typed = parse_location(f"postgresql://bob:{SECRET}@db.example.com:5433/tg?schema=ws1&sslmode=require")
    assert typed.password == "s3cr@t-pw" and "s3cr" not in typed.display and "s3cr" not in repr(typed)
    assert typed.display == "postgresql://bob:***@db.example.com:5433/tg?schema=ws1&sslmode=require"
    assert "s3cr" not in typed.conninfo and "schema" not in typed.conninfo
    assert typed.redact("auth failed for s3cr@t-pw") == "auth failed for ***"
    monkeypatch.setenv("TG_PG_PW", "from-env")
    by_env = parse_location("postgresql://bob@h/db?password_env=TG_PG_PW")
    assert by_env.password == "from-env" and "from-env" not in by_env.display
    monkeypatch.delenv("TG_PG_PW")
    with pytest.raises(ConfigError, match="'TG_PG_PW' named by password_env is not set"):
        parse_location("postgresql://bob@h/db?password_env=TG_PG_PW")
    # a server that cannot be reached: a one-line error, the password masked
    with pytest.raises(StoreUnavailableError) as failed:  # exit code 3: upstream, not bad input
        PostgresStore(f"postgresql://bob:{SECRET}@127.0.0.1:1/db?connect_timeout=2")
    assert "s3cr" not in str(failed.value) and "cannot connect to postgresql://bob:***@127.0.0.1:1/db" in str(
        failed.value)
    assert shown_location(f"postgresql://bob:{SECRET}@h/db") == "postgresql://bob:***@h/db"
    options = parse_location("postgresql://h/db?options=-c%20synchronous_commit%3Doff&schema=a").with_schema("b")
    assert options.conninfo == "postgresql://h/db?options=-c%20synchronous_commit%3Doff"


def test_password_from_the_environment_reaches_the_server(postgres_server: str, pg_url,  # noqa: ANN001
                                                          monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    url = pg_url()
    target = parse_location(url)
    with psycopg.connect(target.conninfo, autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS tg_pw_user")
        conn.execute("CREATE ROLE tg_pw_user LOGIN PASSWORD 'Pw-From-Env' SUPERUSER")
    monkeypatch.setenv("TG_TEST_PW", "Pw-From-Env")
    user_url = url.replace("postgresql://postgres:@", "postgresql://tg_pw_user@") + "&password_env=TG_TEST_PW"
    store = open_store(user_url)
    store.set_meta("k", "v")
    assert store.get_meta("k") == "v" and "Pw-From-Env" not in store.describe()
    store.close()
    stats_config = _config(tmp_path)
    shown = _cli("--index", user_url, "inspect", "--json", config=stats_config)
    assert shown.returncode == 0, shown.stderr
    assert "Pw-From-Env" not in shown.stdout + shown.stderr


def test_schemas_are_separate_indexes(pg_url, postgres_server: str) -> None:  # noqa: ANN001
    first, second = open_store(pg_url("a")), open_store(pg_url("b"))
    first.add_nodes([Node("n", "entity", "in a")])
    assert second.get_node("n") is None
    second.add_nodes([Node("n", "entity", "in b")])
    assert first.get_node("n").text == "in a"
    schemas = list_indexes(parse_location(postgres_server))
    assert parse_location(first.location).schema in schemas and parse_location(second.location).schema in schemas
    assert index_exists(first.location) and not index_exists(pg_url("never"))
    first.close()
    second.close()


def test_foreign_schema_is_refused_and_not_listed(pg_url, postgres_server: str) -> None:  # noqa: ANN001
    url = pg_url("foreign")
    target = parse_location(url)
    with psycopg.connect(target.conninfo, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(target.schema)))
        conn.execute(sql.SQL("CREATE TABLE {}.people(name text)").format(sql.Identifier(target.schema)))
        conn.execute(sql.SQL("CREATE TABLE {}.meta(x int)").format(sql.Identifier(target.schema)))
    with pytest.raises(IndexFileError, match="not a thinkgraph index"):
        open_store(url)
    assert target.schema not in list_indexes(parse_location(postgres_server))


def test_claims_skip_a_row_another_process_is_deciding_about(pg_url) -> None:  # noqa: ANN001
    store = open_store(pg_url())
    assert store.claim("doc", "d1", "p1", 0.1)
    time.sleep(0.2)  # expired: free to take, unless someone holds the row right now
    target = parse_location(store.location)
    with psycopg.connect(target.conninfo) as other:  # a transaction of another process locks the row
        other.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(target.schema)))
        other.execute("SELECT 1 FROM claims WHERE key = 'd1' FOR UPDATE")
        started = time.perf_counter()
        assert not store.claim("doc", "d1", "p2", 30)  # skipped, not waited for
        assert time.perf_counter() - started < 1.0
    assert store.claim("doc", "d1", "p2", 30)
    store.close()


def test_writers_wait_for_each_other_readers_do_not(pg_url) -> None:  # noqa: ANN001
    url = pg_url()
    writer, other, reader = open_store(url), open_store(url), open_store(url)
    finished: list[str] = []

    def second_writer() -> None:
        other.increment_meta("n")
        finished.append("other")

    with writer.transaction():
        writer.increment_meta("n")
        thread = threading.Thread(target=second_writer)
        thread.start()
        time.sleep(0.3)
        assert finished == []  # the other writer waits for the write lock
        assert reader.get_meta("n") is None  # a reader neither waits nor sees uncommitted rows
    thread.join(10)
    assert finished == ["other"] and reader.get_meta("n") == "2"
    for s in (writer, other, reader):
        s.close()


def _upsert_same_document(args: tuple[str, str, int]) -> int:
    location, config, _worker = args
    from thinkgraph.config import load_settings
    from thinkgraph.models import SourceDocument

    text = (FIXTURES / "bridge_corpus.jsonl").read_text("utf-8")
    doc = SourceDocument(id="shared", title="Shared", text=text, source="api:shared")
    with ThinkGraph(location, settings=load_settings(Path(config)), embedder=HashEmbedder(64)) as tg:
        report = tg.add_documents([doc], extractor="nolm")
    return report.indexed


def test_concurrent_upserts_of_one_document_store_it_once(pg_url, tmp_path: Path) -> None:  # noqa: ANN001
    """Three processes upsert the same document at once: it is indexed once, and the graph equals
    the one a single SQLite run builds (no node, edge or provenance row twice)."""
    url, config = pg_url(), str(_config(tmp_path))
    with multiprocessing.get_context("spawn").Pool(3) as pool:
        indexed = pool.map(_upsert_same_document, [(url, config, w) for w in range(3)])
    reference = str(tmp_path / "ref.db")
    _upsert_same_document((reference, config, 0))
    assert sum(indexed) == 1
    pg, ref = open_store(url, create=False), open_store(reference, create=False)
    try:
        assert len(pg.list_documents()) == 1
        assert pg.count_nodes() == ref.count_nodes() and pg.count_edges() == ref.count_edges()
        for name in ("nodes", "edges", "provenance"):
            assert sorted(pg.dump(name)) == sorted(ref.dump(name)), name
    finally:
        pg.close()
        ref.close()


def _sections(store: object) -> dict[str, list]:
    out = {}
    for part in SECTIONS:
        rows = list(store.dump(part.name))
        out[part.name] = [(r[0], r[1].tolist()) for r in rows] if part.name == "vectors" else rows
    return out


def _citations(index: str) -> list[tuple]:
    with ThinkGraph(index, create=False, embedder=HashEmbedder(64, name="hashing:64")) as tg:
        answer = tg.ask("Where is the company Alice Stone founded?", method="ppr")
    return [(c.doc_id, c.chunk_id, c.start, c.end) for c in answer.citations]


def test_copy_both_ways_keeps_everything(pg_url, tmp_path: Path) -> None:  # noqa: ANN001
    """SQLite -> PostgreSQL -> SQLite through the CLI: every section equal row for row (the LLM
    cache, usage, audit, proposals and vectors included), and each copy gives the same evidence."""
    config = _config(tmp_path)
    source, back, url = tmp_path / "src.db", tmp_path / "back.db", pg_url()
    built = _run("-i", str(source), "index", str(FIXTURES / "bridge_corpus.jsonl"), "--openie",
                 str(FIXTURES / "bridge_openie.jsonl"), config=config)
    assert built.exit_code == 0, built.output
    extra = SQLiteStore(source)
    extra.cache_put("llm:v1:abc", {"text": "Rivertown", "usage": [3, 1]})
    extra.record_usage("extract", 4, 400, 40, 2.5)
    extra.add_audit("entity.edit", {"id": "ent:x", "name": "X"})
    extra.record_failure("extract", "c9::chunk", "bad json")
    extra.close()
    there = _cli("copy", str(source), url, config=config)  # once through the real entry point
    assert there.returncode == 0 and "copied" in there.stdout, there.stderr
    assert _run("copy", url, str(back), config=config).exit_code == 0
    refused = _run("copy", str(source), url, config=config)
    assert refused.exit_code == 2 and "already holds an index" in refused.output
    stores = [open_store(str(source), create=False), open_store(url, create=False), open_store(str(back))]
    try:
        contents = [_sections(s) for s in stores]
        assert contents[0]["vectors"] and contents[0]["llm_cache"] and contents[0]["audit"]
        assert contents[0] == contents[1] == contents[2]
    finally:
        for s in stores:
            s.close()
    cited = _citations(str(source))
    assert cited and cited == _citations(url) == _citations(str(back))


def test_cli_and_api_work_unchanged_on_postgres(pg_url, tmp_path: Path,  # noqa: ANN001
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Index, inspect, remove and the typed-graph import on a PostgreSQL index, as on SQLite."""
    monkeypatch.setenv("THINKGRAPH_CACHE_DIR", str(tmp_path / "cache"))
    config, url, local = _config(tmp_path), pg_url(), str(tmp_path / "local.db")
    for index in (url, local):
        built = _run("-i", index, "index", str(FIXTURES / "bridge_corpus.jsonl"), "--json", config=config)
        assert built.exit_code == 0 and json.loads(built.stdout)["indexed"] == 6, built.output
        assert _run("-i", index, "remove", "c6", config=config).exit_code == 0
    stats = [json.loads(_run("-i", index, "inspect", "--json", config=config).stdout) for index in (url, local)]
    assert stats[0]["index"] == parse_location(url).display and stats[0]["size_bytes"] > 0
    for key in ("documents", "nodes", "edges", "communities_by_level", "embedding_model"):
        assert stats[0][key] == stats[1][key], key
    with ThinkGraph(url, embedder=HashEmbedder(64, name="hashing:64")) as tg:
        imported = tg.import_kg(FIXTURES / "grbench_small.json")
    assert Path(imported.path).is_relative_to(tmp_path / "cache") and imported.nodes > 0


def test_a_password_in_the_url_appears_in_no_output_or_file(pg_url, tmp_path: Path) -> None:  # noqa: ANN001
    """The test server trusts local connections, so a typed password is accepted (and unused): it
    must show up in no output, log line, error or file the commands write."""
    url = pg_url().replace("postgresql://postgres:@", "postgresql://postgres:TopSecret123@")
    config = _config(tmp_path)
    outputs = [_cli("-v", "-i", url, "index", str(FIXTURES / "bridge_corpus.jsonl"), config=config),
               _run("-v", "-i", url, "inspect", config=config),
               _run("-i", url, "eval", str(FIXTURES / "questions_small.jsonl"), "-m", "naive", "--retrieval-only",
                    "--out", str(tmp_path / "eval"), config=config),
               _run("-i", url.replace("schema=", "schema=missing_"), "inspect", config=config)]
    text = "".join(getattr(o, "stdout", "") + (getattr(o, "stderr", "") if isinstance(o, subprocess.CompletedProcess)
                                               else o.output) for o in outputs)
    assert outputs[0].returncode == 0 and [o.exit_code for o in outputs[1:]] == [0, 0, 2], text
    assert "postgresql://postgres:***@" in text and "no index at" in text
    assert json.loads((tmp_path / "eval" / "run.json").read_text())["index"].startswith("postgresql://postgres:***@")
    assert "TopSecret123" not in text
    assert not [f for f in tmp_path.rglob("*") if f.is_file() and b"TopSecret123" in f.read_bytes()]


def test_libpq_parameters_in_the_url_reach_the_server(pg_url) -> None:  # noqa: ANN001
    store = open_store(pg_url() + "&options=-c%20synchronous_commit%3Doff&application_name=tg-test")
    try:
        settings = store._rows("SELECT current_setting('synchronous_commit'), current_setting('application_name')")  # noqa: SLF001
        assert settings == [("off", "tg-test")]
    finally:
        store.close()
