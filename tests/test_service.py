"""The HTTP service through FastAPI's test client: every endpoint's success and error paths,
streaming, auth, request limits, workspace isolation, secrets, the OpenAI-compatible endpoint and MCP."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from support import FakeOpenAIServer, make_pdf
from thinkgraph.service.app import create_app
from thinkgraph.service.settings import ServiceSettings

SECRET = "sk-never-show-this-key-123"
ALPHA = ("Lena Sorensen trained with coach Joseph Okafor in Velden. Okafor founded the Velden Rowing Club in 1988. "
         "The club won the northern cup twice.")
BETA = "The Morrow Refractor is a telescope at Hill Observatory. Ada Quinn rebuilt it in 1946."


def config(tmp_path: Path, llm_url: str | None) -> Path:
    path = tmp_path / "thinkgraph.toml"
    llm = f'[llm]\nbase_url = "{llm_url}"\nmax_retries = 0\n' if llm_url else ""
    path.write_text(f'[embedding]\nprovider = "hashing"\ndim = 64\n{llm}', encoding="utf-8")
    return path


@pytest.fixture
def llm() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        server.responder = lambda payload: "Joseph Okafor [1]"
        yield server


@pytest.fixture
def client(tmp_path: Path, llm: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    monkeypatch.setenv("THINKGRAPH_LLM_API_KEY", SECRET)
    settings = ServiceSettings(root=tmp_path / "ws", config_path=config(tmp_path, llm.url), max_request_bytes=200_000)
    with TestClient(create_app(settings), base_url="http://127.0.0.1:8765") as c:
        assert c.post("/v1/workspaces/alpha").status_code == 201
        assert c.put("/v1/workspaces/alpha/documents/rowing.txt", json={"text": ALPHA, "title": "Rowing"}).is_success
        yield c


def test_documents_upsert_status_list_and_delete(client: TestClient) -> None:
    listed = client.get("/v1/workspaces/alpha/documents").json()
    assert [(d["id"], d["status"]) for d in listed] == [("rowing.txt", "done")]
    again = client.put("/v1/workspaces/alpha/documents/rowing.txt", json={"text": ALPHA + " It rows at dawn."})
    assert again.json()["report"]["updated"] == 1 and again.json()["document"]["status"] == "done"
    assert client.get("/v1/workspaces/alpha/documents/rowing.txt").json()["n_chars"] == len(ALPHA) + 17
    assert client.get("/v1/workspaces/alpha/documents/none.txt").status_code == 404
    assert client.put("/v1/workspaces/alpha/documents/x", json={"text": ""}).status_code == 422
    client.put("/v1/workspaces/alpha/documents/extra.txt", json={"text": BETA})
    assert client.delete("/v1/workspaces/alpha/documents/extra.txt").json()["nodes_removed"] > 0
    assert [d["id"] for d in client.get("/v1/workspaces/alpha/documents").json()] == ["rowing.txt"]
    assert client.get("/v1/workspaces").json() == ["alpha"]
    assert client.get("/v1/workspaces/alpha").json()["documents"]["done"] == 1
    # the same text under another id: refused with the reason, queued or not (never silently dropped)
    twin = client.put("/v1/workspaces/alpha/documents/twin.txt", json={"text": ALPHA + " It rows at dawn."})
    assert twin.status_code == 400 and "same content as document 'rowing.txt'" in twin.json()["error"]["message"]
    queued = client.put("/v1/workspaces/alpha/documents/twin2.txt?wait=false",
                        json={"text": ALPHA + " It rows at dawn."})
    assert queued.status_code in (200, 202)
    for _ in range(100):
        listed = {d["id"]: d for d in client.get("/v1/workspaces/alpha/documents").json()}
        if listed.get("twin2.txt", {}).get("status") == "failed":
            break
        time.sleep(0.05)
    assert "same content" in listed["twin2.txt"]["error"]


def test_uploads_pdf_html_and_bad_files(client: TestClient, tmp_path: Path) -> None:
    pdf = make_pdf(["Alpha results on page one", "Ada Quinn rebuilt the Morrow Refractor on page two"])
    made = client.post("/v1/workspaces/alpha/documents", files={"file": ("report.pdf", pdf, "application/pdf")})
    assert made.is_success and made.json()["document"]["id"] == "report.pdf"
    answer = client.post("/v1/workspaces/alpha/ask", json={"question": "Who rebuilt the Morrow Refractor?",
                                                          "method": "naive"}).json()
    cited = next(c for c in answer["citations"] if c["doc_id"] == "report.pdf")
    # one chunk over both pages; the citation is its best-matching sentence, on page 2
    assert cited["page"] == 2 and cited["quote"] == "Ada Quinn rebuilt the Morrow Refractor on page two"
    html = b"<html><head><title>Guide</title><script>x()</script></head><body><p>North gate.</p></body></html>"
    assert client.post("/v1/workspaces/alpha/documents", files={"file": ("g.html", html, "text/html")}).is_success
    scan = client.post("/v1/workspaces/alpha/documents", files={"file": ("scan.pdf", make_pdf([""]), "x")})
    assert scan.status_code == 400 and "no text layer" in scan.json()["error"]["message"]
    empty = client.post("/v1/workspaces/alpha/documents", files={"file": ("e.txt", b"  ", "text/plain")})
    assert empty.status_code == 400 and "empty" in empty.json()["error"]["message"]
    evil = client.post("/v1/workspaces/alpha/documents", files={"file": ("../../../evil.txt", b"Evil text.", "x")})
    assert evil.json()["document"]["id"] == "evil.txt"
    windows = client.post("/v1/workspaces/alpha/documents", files={"file": ("..\\..\\win.txt", b"Win.", "x")})
    assert windows.json()["document"]["id"] == "win.txt"
    assert not list(tmp_path.glob("**/evil.txt")) and not (tmp_path.parent / "evil.txt").exists()


def test_ask_returns_the_answer_with_citations_evidence_trace_and_cost(client: TestClient, llm) -> None:  # noqa: ANN001
    answer = client.post("/v1/workspaces/alpha/ask", json={"question": "Who trained Lena Sorensen?",
                                                          "method": "ppr", "options": {"top_k": 2}}).json()
    assert answer["text"] == "Joseph Okafor" and answer["status"] == "answered"
    citation = answer["citations"][0]
    assert citation["doc_id"] == "rowing.txt" and ALPHA[citation["start"]:citation["end"]].startswith(citation["quote"])
    assert answer["evidence"]["nodes"] and answer["trace"] and answer["cost"]["calls"] == 1
    ids = {n["id"] for n in answer["evidence"]["nodes"]}
    assert answer["evidence"]["edges"] and all(e["src"] in ids and e["dst"] in ids for e in answer["evidence"]["edges"])
    bad = client.post("/v1/workspaces/alpha/ask", json={"question": "q", "method": "nope"})
    assert bad.status_code == 400 and "unknown method 'nope'" in bad.json()["error"]["message"]
    assert client.post("/v1/workspaces/zeta/ask", json={"question": "q"}).status_code == 404
    assert client.post("/v1/workspaces/../etc/ask", json={"question": "q"}).status_code in (400, 404)
    assert client.post("/v1/workspaces/a..b/ask", json={"question": "q"}).status_code == 400


def test_ask_streams_trace_events_while_the_method_runs(client: TestClient) -> None:
    with client.stream("POST", "/v1/workspaces/alpha/ask", json={"question": "Who trained Lena Sorensen?",
                                                                 "method": "naive", "stream": True}) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = list(response.iter_lines())
    events = [line.removeprefix("event: ") for line in lines if line.startswith("event: ")]
    data = [json.loads(line[6:]) for line in lines if line.startswith("data: ")]
    assert events[0] == "started" and events[-1] == "answer"
    # each step is streamed the moment the method records it: retrieval, the answer's tokens as the model
    # writes them, the model call, the responder's step, the model/endpoint summary
    assert [e for e in events if e != "token"] == ["started", "trace", "llm_call", "trace", "trace", "answer"]
    assert events.index("token") < events.index("llm_call")
    tokens = [d["text"] for e, d in zip(events, data, strict=True) if e == "token"]
    assert len(tokens) > 1 and "".join(tokens) == "Joseph Okafor [1]"
    with client.stream("POST", "/v1/workspaces/alpha/ask", json={"question": "q", "method": "bad",
                                                                 "stream": True}) as response:
        body = "".join(response.iter_text())
    assert "event: error" in body and "unknown method" in body


def test_retrieve_needs_no_llm(client: TestClient, llm) -> None:  # noqa: ANN001
    before = len(llm.requests)
    found = client.post("/v1/workspaces/alpha/retrieve", json={"question": "Who founded the club?", "top_k": 1}).json()
    assert found["citations"][0]["doc_id"] == "rowing.txt" and len(found["citations"]) == 1
    assert len(llm.requests) == before


def test_graph_browsing_and_curation_with_audit(client: TestClient) -> None:
    hits = client.get("/v1/workspaces/alpha/search", params={"q": "Joseph Okafor", "k": 3}).json()
    okafor = next(h for h in hits if h["text"] == "Joseph Okafor")
    node = client.get(f"/v1/workspaces/alpha/nodes/{okafor['id']}").json()
    assert node["type"] == "entity" and node["provenance"][0]["doc_id"] == "rowing.txt"
    around = client.get(f"/v1/workspaces/alpha/nodes/{okafor['id']}/neighbors").json()
    assert around["edges"] and around["nodes"]
    assert client.get("/v1/workspaces/alpha/nodes/missing").status_code == 404
    assert client.get("/v1/workspaces/alpha/search", params={"q": "x", "type": "widget"}).status_code == 400
    assert isinstance(client.get("/v1/workspaces/alpha/communities").json(), list)
    edited = client.patch(f"/v1/workspaces/alpha/entities/{okafor['id']}",
                          json={"name": "Coach Joseph Okafor", "description": "rowing coach"}).json()
    assert edited["text"] == "Coach Joseph Okafor"
    top = client.get("/v1/workspaces/alpha/search", params={"q": "Coach Joseph Okafor", "k": 1}).json()[0]
    assert top["id"] == okafor["id"]  # re-embedded under its new name
    others = [h for h in client.get("/v1/workspaces/alpha/search", params={"q": "Okafor", "k": 10}).json()
              if h["id"] != okafor["id"] and "Okafor" in h["text"]]
    if others:
        merged = client.post("/v1/workspaces/alpha/entities/merge",
                             json={"sources": [others[0]["id"]], "target": okafor["id"]}).json()
        assert others[0]["text"] in merged["props"]["aliases"]
        assert client.get(f"/v1/workspaces/alpha/nodes/{others[0]['id']}").status_code == 404
    bad = client.post("/v1/workspaces/alpha/entities/merge", json={"sources": ["nope"], "target": okafor["id"]})
    assert bad.status_code == 404 and bad.json()["error"]["type"] == "not_found_error"
    not_allowed = client.delete("/v1/workspaces/alpha/nodes/x")
    assert not_allowed.status_code == 405 and not_allowed.json()["error"]["type"] == "invalid_request_error"
    log = client.get("/v1/workspaces/alpha/audit").json()
    assert log[-1]["action"] == "entity.edit" and log[-1]["payload"]["before"]["name"] == "Joseph Okafor"


def test_openai_compatible_chat_and_models(client: TestClient) -> None:
    reply = client.post("/v1/chat/completions", json={"model": "alpha/naive", "messages": [
        {"role": "system", "content": "be brief"}, {"role": "user", "content": "Who trained Lena Sorensen?"}]}).json()
    content = reply["choices"][0]["message"]["content"]
    assert content.startswith("Joseph Okafor") and "Sources:\n[1] rowing.txt" in content
    assert reply["object"] == "chat.completion" and reply["usage"]["total_tokens"] > 0
    with client.stream("POST", "/v1/chat/completions", json={"model": "thinkgraph/alpha/naive", "stream": True,
                                                            "messages": [{"role": "user", "content": "Who?"}]}) as r:
        lines = [x for x in r.iter_lines() if x.startswith("data: ")]
    assert lines[-1] == "data: [DONE]" and json.loads(lines[0][6:])["choices"][0]["delta"]["role"] == "assistant"
    assert client.post("/v1/chat/completions", json={"model": "alpha/gpt-4", "messages": [
        {"role": "user", "content": "q"}]}).status_code == 400
    assert "alpha/ppr" in [m["id"] for m in client.get("/v1/models").json()["data"]]


def test_openapi_schema_and_page(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    for path in ("/v1/workspaces/{ws}/ask", "/v1/workspaces/{ws}/retrieve", "/v1/chat/completions",
                 "/v1/workspaces/{ws}/entities/merge", "/v1/workspaces/{ws}/documents/{doc_id}"):
        assert path in schema["paths"]
    page = client.get("/")
    assert page.status_code == 200 and "cytoscape.min.js" in page.text
    assert client.get("/static/vendor/cytoscape.min.js").status_code == 200


def test_workspaces_never_see_each_others_documents(client: TestClient) -> None:
    client.post("/v1/workspaces/beta")
    client.put("/v1/workspaces/beta/documents/telescope.txt", json={"text": BETA})
    for ws, own, other in (("alpha", "rowing.txt", "telescope.txt"), ("beta", "telescope.txt", "rowing.txt")):
        for question in ("Who rebuilt the Morrow Refractor?", "Who trained Lena Sorensen?"):
            for method in ("naive", "ppr", "a2rag"):
                answer = client.post(f"/v1/workspaces/{ws}/ask", json={"question": question, "method": method}).json()
                docs = {c["doc_id"] for c in answer["citations"]}
                assert other not in docs and docs <= {own}
        hits = client.get(f"/v1/workspaces/{ws}/search", params={"q": "Okafor Quinn Refractor", "type": "chunk"})
        assert {h["props"]["doc_id"] for h in hits.json()} == {own}


def test_secrets_never_appear_in_responses_or_logs(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("DEBUG")
    bodies = [client.post("/v1/workspaces/alpha/ask", json={"question": "Who trained Lena?"}).text,
              client.get("/v1/workspaces/alpha").text, client.get("/openapi.json").text,
              client.post("/v1/workspaces/alpha/ask", json={"question": "q", "method": "bad"}).text,
              client.post("/v1/chat/completions", json={"model": "alpha/ppr",
                                                        "messages": [{"role": "user", "content": "Who?"}]}).text]
    with client.stream("POST", "/v1/workspaces/alpha/ask", json={"question": "Who?", "stream": True}) as r:
        bodies.append("".join(r.iter_text()))
    assert all(SECRET not in b for b in bodies) and SECRET not in caplog.text


def test_token_required_off_loopback_and_checked(tmp_path: Path) -> None:
    from thinkgraph.errors import ConfigError

    with pytest.raises(ConfigError, match="needs an access token"):
        create_app(ServiceSettings(root=tmp_path / "w", host="0.0.0.0"))
    app = create_app(ServiceSettings(root=tmp_path / "w", host="0.0.0.0", token="t0ken",
                                     config_path=config(tmp_path, None)))
    with TestClient(app, base_url="http://127.0.0.1:8765") as c:
        assert c.get("/v1/workspaces").status_code == 401
        assert c.get("/v1/workspaces", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert c.get("/v1/workspaces", headers={"Authorization": "Bearer t0ken"}).json() == []
        assert c.post("/v1/chat/completions", json={}).status_code == 401
        assert c.get("/").status_code == 200  # the page itself asks for the token


def test_request_size_limit(client: TestClient) -> None:
    big = client.put("/v1/workspaces/alpha/documents/big.txt", json={"text": "x" * 300_000})
    assert big.status_code == 413

    def chunks() -> Iterator[bytes]:
        yield b'{"text": "'
        for _ in range(30):
            yield b"y" * 10_000
        yield b'"}'

    streamed = client.put("/v1/workspaces/alpha/documents/big2.txt", content=chunks(),
                          headers={"content-type": "application/json"})
    assert streamed.status_code == 413
    assert [d["id"] for d in client.get("/v1/workspaces/alpha/documents").json()] == ["rowing.txt"]


async def test_mcp_tools_list_ask_and_retrieve_with_clear_errors(tmp_path: Path, llm: FakeOpenAIServer) -> None:
    from mcp import Client

    from thinkgraph.models import SourceDocument
    from thinkgraph.service.mcp_server import MAX_ANSWER_CHARS, build_mcp_server
    from thinkgraph.service.workspaces import Workspaces

    spaces = Workspaces(tmp_path / "ws", config(tmp_path, llm.url))
    spaces.get("default", create=True).add_documents([SourceDocument("rowing.txt", "Rowing", ALPHA, "test")])
    async with Client(build_mcp_server(spaces)) as session:
        names = {t.name for t in (await session.list_tools()).tools}
        assert names == {"ask", "retrieve", "list_workspaces", "list_documents"}
        listed = await session.call_tool("list_workspaces", {})
        assert "default" in listed.content[0].text
        docs = json.loads((await session.call_tool("list_documents", {})).content[0].text)
        assert docs == {"id": "rowing.txt", "title": "Rowing", "status": "done", "chars": len(ALPHA), "error": None}
        asked = await session.call_tool("ask", {"question": "Who trained Lena Sorensen?"})
        data = json.loads(asked.content[0].text)
        assert data["answer"] == "Joseph Okafor" and data["citations"][0]["doc_id"] == "rowing.txt"
        found = json.loads((await session.call_tool("retrieve", {"question": "Velden club"})).content[0].text)
        assert found["citations"][0]["doc_id"] == "rowing.txt"
        missing = await session.call_tool("ask", {"question": "q", "workspace": "nowhere"})
        assert missing.is_error and "no workspace 'nowhere'" in missing.content[0].text
        assert "Traceback" not in missing.content[0].text
        bad = await session.call_tool("ask", {"question": "q", "method": "gpt"})
        assert bad.is_error and "unknown method 'gpt'" in bad.content[0].text
        llm.responder = lambda payload: "word " * 3000 + "[1]"
        long = json.loads((await session.call_tool("ask", {"question": "Tell me everything"})).content[0].text)
        assert len(long["answer"]) <= MAX_ANSWER_CHARS + 10 and long["answer"].endswith("[cut]")
        assert long["citations"]
    spaces.close()
