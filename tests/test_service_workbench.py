# ruff: noqa: F811 - the service fixtures `client` and `llm` are shared from test_service
"""The service features behind the workbench page and chat clients: access rules (Host/Origin guard,
token scheme, docs behind the token, redaction), typed OpenAPI, method settings, background uploads
with progress, re-index, uniform top_k, live trace order, and the OpenAI-compatible endpoint
(conversation history, streamed deltas, OpenAI-shaped errors)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from fastapi.testclient import TestClient

from support import FakeOpenAIServer
from test_service import ALPHA, BETA, SECRET, client, config, llm  # noqa: F401 - shared fixtures
from thinkgraph.service.app import create_app
from thinkgraph.service.settings import ServiceSettings

LOCAL = "http://127.0.0.1:8765"


def test_without_a_token_only_loopback_hosts_and_origins_are_served(tmp_path: Path) -> None:
    settings = ServiceSettings(root=tmp_path / "w", config_path=config(tmp_path, None), allowed_hosts=("box.lan",))
    with TestClient(create_app(settings), base_url=LOCAL) as c:
        assert c.get("/v1/workspaces").status_code == 200
        assert c.get("/v1/workspaces", headers={"Origin": "http://localhost:8765"}).status_code == 200
        assert c.get("/v1/workspaces", headers={"Host": "[::1]:8765"}).status_code == 200
        rebinding = c.get("/v1/workspaces", headers={"Host": "attacker.example:8765"})
        assert rebinding.status_code == 403 and "attacker.example" in rebinding.json()["error"]["message"]
        assert rebinding.json()["error"]["code"] == "403"  # the same error shape as every other reply
        csrf = c.post("/v1/workspaces/x", headers={"Origin": "https://evil.example"})
        assert csrf.status_code == 403 and not (tmp_path / "w" / "x").exists()
        assert c.get("/v1/workspaces", headers={"Origin": "null"}).status_code == 403
        assert c.get("/v1/workspaces", headers={"Host": "box.lan", "Origin": "http://box.lan"}).status_code == 200


def test_token_scheme_docs_and_openapi_behind_the_token(tmp_path: Path) -> None:
    app = create_app(ServiceSettings(root=tmp_path / "w", host="0.0.0.0", token="t0ken-value",
                                     config_path=config(tmp_path, None)))
    with TestClient(app, base_url="http://anyhost.example") as c:  # with a token, any host may call
        assert c.get("/v1/workspaces", headers={"Authorization": "bearer t0ken-value"}).status_code == 200
        assert c.get("/v1/workspaces", headers={"Authorization": "BEARER  t0ken-value "}).status_code == 200
        assert c.get("/v1/workspaces", headers={"Authorization": "Basic t0ken-value"}).status_code == 401
        denied = c.get("/v1/workspaces", headers={"Authorization": "Bearer t0ken-valuX"})
        assert denied.status_code == 401 and denied.json()["error"]["type"] == "authentication_error"
        assert c.get("/openapi.json").status_code == 401 and c.get("/docs").status_code == 401
        assert "t0ken-value" not in c.get("/docs").text
        assert c.get("/openapi.json", headers={"Authorization": "Bearer t0ken-value"}).status_code == 200
        c.cookies.set("thinkgraph_token", "t0ken-value")
        assert c.get("/docs").status_code == 200


def test_docs_work_offline_and_the_schema_is_typed(client: TestClient) -> None:
    page = client.get("/docs").text
    assert "/static/vendor/swagger-ui-bundle.js" in page and "cdn" not in page.lower()
    assert client.get("/static/vendor/swagger-ui-bundle.js").status_code == 200
    schema = client.get("/openapi.json").json()
    answer = schema["paths"]["/v1/workspaces/{ws}/ask"]["post"]["responses"]["200"]["content"]
    assert answer["application/json"]["schema"] == {"$ref": "#/components/schemas/Answer"}
    assert "text/event-stream" in answer
    names = schema["components"]["schemas"]
    for name in ("Answer", "Citation", "DocumentOut", "ChatCompletion", "NodeOut", "MethodInfo", "ErrorOut"):
        assert name in names
    untyped = [f"{m} {p}" for p, ops in schema["paths"].items() for m, op in ops.items()
               if op["responses"].get("200", op["responses"].get("201", {})).get("content", {})
               .get("application/json", {}).get("schema", {}) == {}]
    assert untyped == []
    invalid = schema["paths"]["/v1/workspaces/{ws}/ask"]["post"]["responses"]["422"]
    assert invalid["content"]["application/json"]["schema"]["$ref"].endswith("ErrorOut")


def test_methods_describe_their_settings(client: TestClient) -> None:
    methods = {m["name"]: m for m in client.get("/v1/methods").json()}
    assert set(methods) >= {"ppr", "naive", "tog3", "topg", "a2rag", "kgr"}
    tog3 = {s["name"]: s for s in methods["tog3"]["settings"]}
    assert tog3["horizon"]["default"] == 3 and tog3["horizon"]["type"] == "integer"
    assert tog3["evolve_query"]["type"] == "boolean" and "Alg. 2" in tog3["horizon"]["description"]
    assert {s["name"]: s for s in methods["topg"]["settings"]}["mode"]["choices"] == ["naive", "local", "global"]
    assert methods["kgr"]["needs_llm"] and not methods["ppr"]["needs_llm"]


def test_uploads_index_in_the_background_with_status_and_reindex(client: TestClient) -> None:
    files = [("files", ("a.txt", BETA.encode(), "text/plain")),
             ("files", ("b.md", b"# Harbour\nThe harbour of Velden opened in 1901.", "text/markdown"))]
    queued = client.post("/v1/workspaces/alpha/uploads", files=files)
    assert queued.status_code == 200 and {d["document"]["id"] for d in queued.json()} == {"a.txt", "b.md"}
    deadline = time.time() + 60
    while time.time() < deadline:
        docs = {d["id"]: d for d in client.get("/v1/workspaces/alpha/documents").json()}
        if all(docs.get(i, {}).get("status") == "done" for i in ("a.txt", "b.md")):
            break
        time.sleep(0.1)
    assert {d["status"] for d in docs.values()} == {"done"} and len(docs) == 3
    again = client.post("/v1/workspaces/alpha/documents/a.txt/reindex")
    assert again.status_code == 200 and again.json()["document"]["status"] == "done"
    assert again.json()["document"]["n_chars"] == len(BETA)
    assert client.post("/v1/workspaces/alpha/documents/zzz/reindex").status_code == 404
    bad = client.post("/v1/workspaces/alpha/uploads", files=[("files", ("x.bin", b"\x00\x01\x02", "x"))])
    assert bad.status_code == 400 and "error" in bad.json()


def test_top_k_is_uniform_and_method_errors_are_clear(client: TestClient) -> None:
    for method in ("naive", "ppr", "a2rag", "tog3"):  # (topg needs propositions this index has not)
        found = client.post("/v1/workspaces/alpha/retrieve", json={"question": "Who founded the club?",
                                                                   "method": method, "top_k": 1})
        assert found.status_code == 200 and len(found.json()["citations"]) <= 1, method
    wrong = client.post("/v1/workspaces/alpha/ask", json={"question": "q", "method": "tog3",
                                                          "options": {"horizn": 2}})
    assert wrong.status_code == 400 and "horizn" in wrong.json()["error"]["message"]


def test_trace_events_arrive_while_a_multi_step_method_runs(client: TestClient, llm: FakeOpenAIServer) -> None:
    """tog3 makes several model calls; each step is sent as it is recorded, before the answer."""
    replies = iter(["Okafor ^ Sorensen", "Joseph Okafor", '{"sufficient": true, "reason": "named"}',
                    "Joseph Okafor"])
    llm.responder = lambda payload: next(replies, "Joseph Okafor")
    with client.stream("POST", "/v1/workspaces/alpha/ask", json={"question": "Who trained Lena Sorensen?",
                                                                 "method": "tog3", "stream": True}) as r:
        events = [(line.removeprefix("event: "), None) for line in r.iter_lines() if line.startswith("event: ")]
    names = [e for e, _ in events]
    assert names[0] == "started" and names[-1] == "answer"
    first_step, first_call = names.index("trace"), names.index("llm_call")
    assert first_call < first_step < names.index("answer")
    assert names.count("trace") >= 3 and names.count("llm_call") >= 3
    # steps interleave with calls rather than arriving together at the end
    assert names[names.index("trace") + 1:].count("llm_call") >= 2


def test_chat_condenses_history_streams_deltas_and_errors_like_openai(client: TestClient,
                                                                      llm: FakeOpenAIServer) -> None:
    asked: list[str] = []

    def respond(payload: dict) -> str:
        prompt = payload["messages"][-1]["content"]
        asked.append(prompt)
        return "Who trained Lena Sorensen?" if "Standalone question" in prompt else "Joseph Okafor [1]"

    llm.responder = respond
    messages = [{"role": "user", "content": "Tell me about Lena Sorensen."},
                {"role": "assistant", "content": "She is a rower from Velden."},
                {"role": "user", "content": "Who trained her?"}]
    reply = client.post("/v1/chat/completions", json={"model": "alpha/naive", "messages": messages}).json()
    assert reply["choices"][0]["message"]["content"].startswith("Joseph Okafor")
    assert "Latest message: Who trained her?" in asked[0] and "She is a rower" in asked[0]
    assert "Who trained Lena Sorensen?" in asked[1]  # the method was asked the standalone question
    with client.stream("POST", "/v1/chat/completions", json={"model": "alpha/naive", "stream": True,
                                                            "messages": messages}) as r:
        data = [line[6:] for line in r.iter_lines() if line.startswith("data: ")]
    assert data[-1] == "[DONE]"
    chunks = [json.loads(d) for d in data[:-1]]
    deltas = [c["choices"][0]["delta"] for c in chunks]
    assert deltas[0] == {"role": "assistant", "content": ""}
    content = [d["content"] for d in deltas[1:] if "content" in d]
    assert len(content) >= 3 and "".join(content).startswith("Joseph Okafor\n\nSources:\n[1] rowing.txt")
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop" and "total_tokens" in chunks[-1]["usage"]
    for body, status in (({"model": "alpha/gpt-4", "messages": [{"role": "user", "content": "q"}]}, 400),
                         ({"model": "alpha/naive", "messages": []}, 422),
                         ({"model": "nowhere/naive", "messages": [{"role": "user", "content": "q"}]}, 404),
                         ({"model": "alpha/naive", "messages": [{"role": "assistant", "content": "hi"}]}, 400)):
        failed = client.post("/v1/chat/completions", json=body)
        assert failed.status_code == status and set(failed.json()) == {"error"}
        assert failed.json()["error"]["message"] and failed.json()["error"]["type"]


def test_upstream_errors_never_echo_the_key(client: TestClient, llm: FakeOpenAIServer) -> None:
    from support import Behaviour

    for _ in range(4):
        llm.push(Behaviour(status=401, body=json.dumps({"error": {"message": f"bad key {SECRET}"}})))
    bodies = [client.post("/v1/workspaces/alpha/ask", json={"question": "Who rows?", "method": "naive"}).text]
    with client.stream("POST", "/v1/workspaces/alpha/ask", json={"question": "Who rows at dawn?",
                                                                 "method": "naive", "stream": True}) as r:
        bodies.append("".join(r.iter_text()))
    assert all(SECRET not in b for b in bodies)
