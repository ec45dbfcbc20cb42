"""The smaller things a first user met (issue 49), each through the real entry point: the command line
as `python -m thinkgraph` in a subprocess, the HTTP API through the service's test client, Python
through ThinkGraph."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from support import ROOT, SAMPLE_CORPUS, HashEmbedder
from thinkgraph.errors import ExitCode

HASHING = '[embedding]\nprovider = "hashing"\ndim = 64\n'


def run(*args: str, config: Path | None = None, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("THINKGRAPH_") and k != "COLUMNS"}
    head = ["--config", str(config)] if config is not None else []
    return subprocess.run([sys.executable, "-m", "thinkgraph", *head, *args], capture_output=True, text=True,
                          env=env, timeout=300, input=stdin)


@pytest.fixture(scope="module")
def hashing(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cfg") / "hashing.toml"
    path.write_text(HASHING, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory, hashing: Path) -> Path:
    index = tmp_path_factory.mktemp("sample") / "sample.db"
    done = run("--index", str(index), "index", str(SAMPLE_CORPUS), config=hashing)
    assert done.returncode == 0, done.stderr
    return index


def test_an_index_in_a_folder_that_does_not_exist_says_so(tmp_path: Path, hashing: Path) -> None:
    index = tmp_path / "missing" / "d.db"
    done = run("--index", str(index), "index", str(SAMPLE_CORPUS), config=hashing)
    assert done.returncode == ExitCode.INPUT and "read-only" not in done.stderr
    assert done.stderr.strip() == (f"error: cannot create {index}: the folder {index.parent} does not exist (create "
                                   "it first, or give another --index)")


def test_inspect_on_an_index_interrupted_before_its_first_passage_prints_no_none(tmp_path: Path,
                                                                                hashing: Path) -> None:
    from thinkgraph.store.factory import open_store

    index = tmp_path / "cut.db"
    open_store(index, create=True).close()  # what a run killed before its first commit leaves
    done = run("--index", str(index), "inspect", config=hashing)
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert "None" not in first and "embedding not recorded yet" in first and "extractor not recorded yet" in first


@pytest.mark.parametrize("k", [2, 3])
def test_tog3_shows_as_many_passages_as_top_k(sample: Path, hashing: Path, k: int) -> None:
    done = run("--index", str(sample), "ask", "Who made the lens of the Skarn Lighthouse?", "-m", "tog3",
               "--top-k", str(k), "--json", config=hashing)
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["citations"]) == k


def test_a_question_on_standard_input_is_taken_without_its_newline(sample: Path, hashing: Path) -> None:
    done = run("--index", str(sample), "ask", "-", "--json", stdin="Who trained Lena Sorensen?\n", config=hashing)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["question"] == "Who trained Lena Sorensen?"


def test_index_help_names_the_default_extractor(hashing: Path) -> None:
    done = run("index", "--help", config=hashing)
    assert done.returncode == 0 and "nolm (the default" in " ".join(done.stdout.split())


@pytest.fixture
def client(tmp_path: Path, hashing: Path) -> Iterator[TestClient]:
    from thinkgraph.service.app import create_app
    from thinkgraph.service.settings import ServiceSettings

    settings = ServiceSettings(root=tmp_path / "ws", config_path=hashing)
    with TestClient(create_app(settings), base_url="http://127.0.0.1:8765") as c:
        assert c.post("/v1/workspaces/w").status_code == 201
        yield c


def test_an_upload_is_titled_as_the_command_line_titles_the_same_file(client: TestClient, sample: Path,
                                                                      hashing: Path) -> None:
    name = "skarn-lighthouse.txt"
    sent = client.post("/v1/workspaces/w/documents",
                       files={"file": (name, (SAMPLE_CORPUS / name).read_bytes(), "text/plain")})
    assert sent.is_success, sent.text
    listed = run("--index", str(sample), "documents", "--json", config=hashing)
    cli_title = next(d["title"] for d in json.loads(listed.stdout) if d["id"] == name)
    assert sent.json()["document"]["title"] == cli_title == "skarn-lighthouse"


def test_malformed_json_over_http_says_what_is_wrong(client: TestClient) -> None:
    sent = client.post("/v1/workspaces/w/ask", content=b'{"question": "Who?", ', headers={"content-type":
                                                                                          "application/json"})
    assert sent.status_code == 422
    message = sent.json()["error"]["message"]
    assert message.startswith("the request body is not valid JSON: ") and "at character" in message
    assert "JSON decode error" not in message and not message[0].isdigit()


def test_quotes_from_python_and_http_come_plain_as_on_the_command_line(client: TestClient, tmp_path: Path) -> None:
    from thinkgraph.api import ThinkGraph
    from thinkgraph.citations import display_quote

    question = "Who trained Lena Sorensen?"
    with ThinkGraph(tmp_path / "p.db", embedder=HashEmbedder()) as tg:
        tg.index([SAMPLE_CORPUS / "people.md"])
        cited = tg.ask(question, method="ppr").citations[0]
    assert "**" in cited.quote and cited.plain_quote is not None and "**" not in cited.plain_quote
    assert display_quote(cited.quote, 10_000) == " ".join(cited.plain_quote.split())
    text = (SAMPLE_CORPUS / "people.md").read_text(encoding="utf-8")
    assert text[cited.start:cited.end] == cited.quote  # the data still quotes the file exactly
    client.post("/v1/workspaces/w/documents", files={"file": ("people.md", text.encode(), "text/markdown")})
    over_http = client.post("/v1/workspaces/w/ask", json={"question": question, "method": "ppr"}).json()
    assert over_http["citations"][0]["plain_quote"] == cited.plain_quote


def test_the_readme_says_before_each_integration_block_which_install_it_needs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for module, extra in (("langchain", "langchain"), ("llamaindex", "llamaindex")):
        block = readme.index(f"from thinkgraph.integrations.{module} import")
        before = readme[readme.rindex("\n\n", 0, readme.rindex("```", 0, block) - 1):block]
        assert f"pip install -e '.[{extra}]'" in before or f".venv/bin/pip install -e '.[{extra}" in before, before
