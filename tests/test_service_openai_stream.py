"""/v1/chat/completions with ``stream: true`` sends the answer as the model writes it: the text filter
(service.streaming.LiveAnswer), every method run through the endpoint's chunk stream (live where the
final answer is a streamed call, after the run where it is not), and a served endpoint in front of a
model double that writes its next token only once the client has seen the previous one."""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from support import SAMPLE_CORPUS, HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.llm.backend import ChatRequest
from thinkgraph.service.app import create_app
from thinkgraph.service.routes_openai import _Base, chat_chunks, reply_text
from thinkgraph.service.security import SecretMask
from thinkgraph.service.settings import ServiceSettings
from thinkgraph.service.streaming import FINAL_ANSWER_STEPS, LiveAnswer, run_events
from thinkgraph.testing import ScriptedBackend

QUESTION = "Who founded the Harbor Hill Observatory?"


def feed_all(live: LiveAnswer, step: str, pieces: list[str]) -> list[str]:
    return [live.feed(step, piece) for piece in pieces]


def test_live_text_is_the_answer_as_the_method_will_clean_it() -> None:
    live = LiveAnswer()
    sent = feed_all(live, "answer.from_passages", ["<th", "ink>let me see</thi", "nk> Adela", " Morrow [", "1", "]",
                                                   " founded", " it [2", "]. "])
    # the reasoning block never shows, a marker is held until it is known to be one and then dropped,
    # and trailing spaces wait for the next word
    assert sent == ["", "", "Adela", " Morrow", "", "", "  founded", " it", "."]
    assert live.sent == "Adela Morrow  founded it." and live.rest("Adela Morrow  founded it.") == ""
    assert feed_all(LiveAnswer(), "tog3.respond", ["Adela", " Morrow"]) == ["", ""]  # not a final answer step
    kept = LiveAnswer()  # a method that keeps markers in its answer (kg baselines) gets them live too
    assert "".join(feed_all(kept, "kg.text_rag", ["Adela [", "1]"])) == "Adela [1]"
    opened = LiveAnswer()
    assert "".join(feed_all(opened, "answer.from_passages", ["see [note", "] here"])) == "see [note] here"


def test_a_reasoning_line_is_not_streamed_only_the_answer_line_after_it() -> None:
    live = LiveAnswer()
    sent = feed_all(live, "answer.from_passages", ["Reas", "oning: Adela", " Morrow founded it [1].\n",
                                                   "Ans", "wer: Adela", " Morrow [1]"])
    assert "".join(sent) == "Adela Morrow" and live.rest("Adela Morrow") == ""
    plain = LiveAnswer()  # an answer without labels streams as before
    assert "".join(feed_all(plain, "answer.from_passages", ["Answer: ", "Oslo [2]"])) == "Oslo"


def test_what_the_stream_could_not_send_live_follows_when_the_answer_is_known() -> None:
    assert LiveAnswer().rest("Adela Morrow") is None  # nothing live: the caller sends it word by word
    echoed = LiveAnswer()
    feed_all(echoed, "answer.from_passages", ["Using only the ", "numbered passages"])
    assert echoed.rest("the model repeated the prompt's instructions") == \
        "\n\nthe model repeated the prompt's instructions"
    twice = LiveAnswer()  # a second final call in one run: what came live stays, the answer completes it
    assert feed_all(twice, "answer.closed_book", ["Adela "]) == ["Adela"]
    assert feed_all(twice, "answer.from_passages", ["Morrow"]) == [""] and twice.rest("Adela Morrow") == " Morrow"
    # a secret split across tokens is caught on the whole text: never sent whole, the answer (redacted
    # by the stream) completes the reply
    redacted = LiveAnswer(redact=lambda text: text.replace("sk-secret", "***"))
    sent = "".join(feed_all(redacted, "answer.closed_book", ["key sk-", "secret", " here"]))
    assert "sk-secret" not in sent + (redacted.rest("key *** here") or "")


def _value(schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """A value of a JSON schema in which every check passes: true, a high score, the first facts, and
    the answer wherever text is asked for."""
    if "$ref" in schema:
        return _value(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "anyOf" in schema:
        return _value(schema["anyOf"][0], defs)
    if "enum" in schema:  # a verdict's "yes" / "no": the first, yes
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        return {key: _value(sub, defs) for key, sub in schema.get("properties", {}).items()}
    if kind == "array":  # (numbers in a list are the numbers of listed facts: the first ones)
        items = schema.get("items", {})
        return [1, 2, 3] if items.get("type") == "integer" else [_value(items, defs)]
    if kind in ("integer", "number"):
        return max(1, min(90, schema.get("maximum", 90)))
    return {"boolean": True, "string": "Adela Morrow founded it."}.get(kind or "string")


def _json_reply(request: ChatRequest) -> str:
    """The structured replies the methods ask for (whatever their schema): every check passes."""
    schema = request.structured["response_format"]["json_schema"]["schema"]
    return json.dumps(_value(schema, schema.get("$defs", {})))


def _reply(request: ChatRequest) -> str:
    prompt = request.messages[-1]["content"]
    if request.structured:
        return _json_reply(request)
    if prompt.startswith("Give up to"):  # tog3's keywords
        return "Adela Morrow^founded^Harbor Hill Observatory"
    return "Adela Morrow founded the observatory [1]"


@pytest.fixture(scope="module")
def sample_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("chat") / "sample.db"
    settings = Settings()
    settings.index.nolm_propositions = True  # topg reads propositions
    with ThinkGraph(path, settings=settings, embedder=HashEmbedder()) as tg:
        tg.index([SAMPLE_CORPUS])
    return path


async def _run(index: Path, method: str, options: dict[str, Any]) -> tuple[list[str], LiveAnswer, str]:
    """One method run as the chat endpoint hears it: the order of live text ("live") and of the
    endpoint step the run envelope records once the method has returned ("end"), and the answer.
    ``index`` is the test's own copy: an answer from another test's LLM cache would come in one piece."""
    with ThinkGraph.open(index, settings=Settings(), embedder=HashEmbedder(),
                         backend=ScriptedBackend(script=[_reply] * 40)) as tg:
        live, order, answer = LiveAnswer(), [], None
        async for event in run_events(lambda: tg.aask(QUESTION, method, **options), {}):
            if event.name == "token" and live.feed(event.data["step"], event.data["text"]):
                order.append("live")
            elif event.name == "trace" and (event.data["agent"], event.data["action"]) == ("llm", "endpoint"):
                order.append("end")
            elif event.name == "answer":
                answer = event.data
        assert answer is not None
        return order, live, answer["text"] or answer["message"]


LIVE = [("none", {}), ("naive", {}), ("ppr", {}), ("hybrid", {}), ("tog3", {}), ("topg", {"mode": "naive"}),
        ("topg", {}),
        ("topg", {"mode": "global", "breadth": 2, "global_max_iter": 1, "min_facts": 20}),
        ("kg-textrag", {}), ("kg-graphrag", {}), ("ircot", {})]
# a2rag's answer counts only once Triple-Check passed it; ircot's without its reader comes from action
# replies, topg local's paper form from a JSON verdict (its reader streams: LIVE), and kgr's from its chain
# here (this double's replies name no action, so the chain reaches no passage for kgr's reader to read)
AFTER = [("a2rag", {}), ("ircot", {"reader": "cot"}), ("topg", {"reader": "paper"}), ("kgr", {"steps": 2})]


@pytest.mark.parametrize(("method", "options"), LIVE + AFTER,
                         ids=[f"{m}-{'-'.join(map(str, o.values()))}" for m, o in LIVE + AFTER])
async def test_each_method_streams_its_final_answer_live_or_after_the_run(sample_index: Path, method: str,
                                                                          options: dict[str, Any],
                                                                          tmp_path: Path) -> None:
    order, live, text = await _run(Path(shutil.copy(sample_index, tmp_path / "index.db")), method, options)
    if (method, options) in LIVE:
        # the whole answer went out while the method ran, as the model wrote it, in more than one piece
        assert order.count("live") > 1 and order.index("end") == len(order) - 1
        assert live.sent == text and live.rest(text) == "" and text.startswith("Adela Morrow")
    else:
        assert order == ["end"] and live.rest(text) is None


@pytest.mark.parametrize("method", ["naive", "a2rag"])
async def test_the_streamed_reply_is_the_reply_sent_without_streaming(sample_index: Path, method: str) -> None:
    with ThinkGraph.open(sample_index, settings=Settings(), embedder=HashEmbedder(),
                         backend=ScriptedBackend(script=[_reply] * 40)) as tg:
        content = []
        async for chunk in chat_chunks(tg, QUESTION, method, _Base("id", 0, "m"), SecretMask([])):
            if chunk.startswith("data: {"):
                content.append(json.loads(chunk[6:])["choices"][0]["delta"].get("content") or "")
        again = await tg.aask(QUESTION, method)  # answered from the index's LLM cache
    assert "".join(content) == reply_text(again) and "\n\nSources:\n[1] " in reply_text(again)


def test_every_final_answer_step_is_a_step_some_method_streams() -> None:
    assert set(FINAL_ANSWER_STEPS) == {"answer.from_passages", "answer.closed_book", "tog3.final",
                                       "topg.naive_answer", "topg.answer", "topg.report", "kgr.read",
                                       "kg.text_rag", "kg.graph_rag"}


# --- a served endpoint, a model double in lockstep with the client -----------------------------------

WORDS = ["Adela ", "Morrow ", "founded ", "the ", "observatory ", "in ", "1887."]
WAIT_S = 10.0  # how long the double waits for the client to see a token before it writes the next anyway


class LockstepModel:
    """An OpenAI-compatible server whose streamed reply writes one word, then waits until the client
    of the thinkgraph service has received it as a content delta (or WAIT_S passes) before the next.
    A service that sent the answer only at the end would keep each wait to its full length; one that
    streams lets every wait end early. Which it was is recorded per word, not timed."""

    def __init__(self) -> None:
        self.received = ""  # the content the client has seen so far
        self.seen_in_time: list[bool] = []
        self.changed = threading.Condition()
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("content-length", 0)))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for i, word in enumerate(WORDS):
                    self._send({"content": word})
                    if i < len(WORDS) - 1:
                        model.seen_in_time.append(model.wait_for("".join(WORDS[: i + 1]).strip()))
                self._send({}, "stop")
                self.wfile.write(b"data: [DONE]\n\n")

            def _send(self, delta: dict[str, str], finish: str | None = None) -> None:
                event = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
                self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                self.wfile.flush()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def wait_for(self, text: str) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: self.received.startswith(text), timeout=WAIT_S)

    def saw(self, content: str) -> None:
        with self.changed:
            self.received += content
            self.changed.notify_all()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, LockstepModel]]:
    model = LockstepModel()
    config = tmp_path / "thinkgraph.toml"
    # (documents indexed without the model: the one model call is the answer's)
    config.write_text(f'[embedding]\nprovider = "hashing"\ndim = 64\n[llm]\nbase_url = "{model.url}"\n'
                      'max_retries = 0\ntimeout_s = 60\n[index]\ndocument_summaries = "first_sentences"\n'
                      "summarize_communities = false\n", encoding="utf-8")
    app = create_app(ServiceSettings(root=tmp_path / "ws", config_path=config))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=_free_port(), log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "the service did not start"
    url = f"http://127.0.0.1:{server.config.port}"
    yield url, model
    server.should_exit = True
    thread.join(timeout=10)
    model.httpd.shutdown()
    model.httpd.server_close()


def test_an_openai_client_sees_each_token_before_the_model_writes_the_next(
        served: tuple[str, LockstepModel]) -> None:
    url, model = served
    with httpx.Client(base_url=url, timeout=120) as client:
        assert client.post("/v1/workspaces/default").status_code == 201
        text = (SAMPLE_CORPUS / "people.md").read_text(encoding="utf-8")
        assert client.put("/v1/workspaces/default/documents/people.md", json={"text": text}).is_success
        deltas: list[str] = []
        body = {"model": "default/naive", "stream": True, "messages": [{"role": "user", "content": QUESTION}]}
        with client.stream("POST", "/v1/chat/completions", json=body) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            for line in response.iter_lines():
                if line.startswith("data: {"):
                    content = json.loads(line[6:])["choices"][0]["delta"].get("content")
                    if content:
                        deltas.append(content)
                        model.saw(content)
    # every word but the last reached the client while the model was still writing the answer
    assert model.seen_in_time == [True] * (len(WORDS) - 1)
    assert "".join(deltas).startswith("Adela Morrow founded the observatory in 1887.\n\nSources:\n[1] people.md")
    assert len(deltas) >= len(WORDS)
