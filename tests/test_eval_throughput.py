"""benchmarks/eval_throughput.py: N questions really are in flight together (the eval runner's and the
LLM client's concurrency both N), each setting's calls reach the server (its own seed: the LLM cache
answers none), and the table says questions a minute against 1 in flight."""

from __future__ import annotations

import asyncio
from pathlib import Path

from support import FIXTURES, load_benchmark
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.embed.hashing import HashingEmbedder
from thinkgraph.eval.datasets import Question
from thinkgraph.eval.runner import MethodSpec
from thinkgraph.llm.backend import ChatRequest, ChatResult

throughput = load_benchmark("eval_throughput")
QUESTIONS = [Question(f"q{i}", text, ("Rivertown",)) for i, text in enumerate([
    "Where is the company founded by Alice Stone based?", "Which valley is Rivertown in?",
    "Where does the engineer Bob Reed work?", "Which company is based in Rivertown?"])]


class SlotsBackend:
    """A server answering every call alike after a pause, counting how many calls it held at once."""

    def __init__(self) -> None:
        self.active = self.peak = 0
        self.seeds: list[int | None] = []

    async def chat(self, request: ChatRequest, on_delta: object = None) -> ChatResult:
        self.active += 1
        self.peak = max(self.peak, self.active)
        self.seeds.append(request.seed)
        await asyncio.sleep(0.02)  # a pause lets the other questions' calls arrive
        self.active -= 1
        return ChatResult(text="Reasoning: Acme Corp is based in Rivertown [1].\nAnswer: Rivertown [1]",
                          prompt_tokens=10, completion_tokens=5)


def test_each_setting_holds_its_questions_in_flight_and_reaches_the_server(tmp_path: Path) -> None:
    path = tmp_path / "bridge.db"
    embedder = HashingEmbedder(128, "test:hash")
    with ThinkGraph(path, embedder=embedder, create=True) as tg:
        tg.index([FIXTURES / "bridge_corpus.jsonl"])
    peaks: dict[int, int] = {}
    seeds: dict[int, set[int | None]] = {}

    def opener(settings: Settings) -> ThinkGraph:
        backend = SlotsBackend()
        n = settings.llm.concurrency
        original = backend.chat

        async def chat(request: ChatRequest, on_delta: object = None) -> ChatResult:
            reply = await original(request, on_delta)
            peaks[n], seeds[n] = backend.peak, set(backend.seeds)
            return reply

        backend.chat = chat  # type: ignore[method-assign]
        return ThinkGraph.open(path, settings=settings, embedder=embedder, backend=backend)

    base = Settings()
    base.llm.base_url, base.llm.model = "http://scripted", "scripted"
    rows = throughput.run_all(opener, base, QUESTIONS, MethodSpec.parse("ppr"), [1, 2, 4])
    assert [r.questions for r in rows] == [4, 4, 4] and all(r.f1 == 100.0 for r in rows)
    assert peaks == {1: 1, 2: 2, 4: 4}  # no setting cached away by the one before it: every call is sent
    assert seeds == {n: {throughput.SEED_BASE + n} for n in (1, 2, 4)}
    table = throughput.table(rows)
    assert table.splitlines()[2].startswith("| 1 | 4 |") and "| 1.00 |" in table.splitlines()[2]
