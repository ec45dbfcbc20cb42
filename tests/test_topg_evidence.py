"""ToPG with a scripted model that reads the numbered facts it is shown (Select keeps the facts on the
question's path, Eval answers only when the chain is complete), replying with JSON wrapped in prose;
global mode without an LLM; Leiden computed once per version of the index; the call budget."""

from __future__ import annotations

import json
import re

import pytest

from support import FIXTURES
from thinkgraph.llm.backend import ChatRequest
from thinkgraph.methods.topg import communities as topg_communities
from thinkgraph.testing import ScriptedBackend

QUESTION = "In which valley lies the town where Acme Corp is based?"
PATH = ("Acme Corp based in Rivertown", "Rivertown lies in Greenland Valley")


def numbered(request: ChatRequest) -> dict[int, str]:
    text = request.messages[0]["content"].split("Facts:", 1)[1]
    return {int(n): fact for n, fact in re.findall(r"^\[(\d+)\] (.*)$", text, re.MULTILINE)}


def select(request: ChatRequest) -> str:
    """Keeps the facts about Acme Corp's town or that town's place, in prose around the JSON."""
    keep = [n for n, fact in numbered(request).items() if "based in" in fact or "lies in" in fact]
    reply = json.dumps({'reason': 'they say where', 'keep': keep})
    return f"Facts {keep} are relevant.\n{reply}\nThe others concern other things."


def stop_judgement(request: ChatRequest) -> bool:
    """Whether Eval is asked as a stop judgement (reader="shared": reason, then "yes"/"no")."""
    return '"verdict": "yes" or "no"' in request.messages[0]["content"]


def evaluate(request: ChatRequest) -> str:
    facts = numbered(request)
    used = [n for n, fact in facts.items() if fact in PATH]
    if stop_judgement(request):
        done = len(used) == 2
        return "Judging: " + json.dumps({"reason": "both hops" if done else "a hop is missing",
                                         "verdict": "yes" if done else "no"})
    if len(used) < 2:
        return "Not yet: " + json.dumps({"answerable": False})
    return json.dumps({"answerable": True, "answer": "Greenland Valley", "facts": used}) + "\n(two hops)"


def read(request: ChatRequest) -> str:
    """The one reader: the answer, citing the passages of both hops."""
    shown = re.findall(r"^\[(\d+)\] (.*)$", request.messages[0]["content"], re.MULTILINE)
    cited = "".join(f"[{n}]" for n, text in shown if "based in Rivertown" in text or "Rivertown lies in" in text)
    return f"Asks for: a place\nFacts: Acme Corp is based in Rivertown, which lies in Greenland Valley.\n" \
           f"Answer: Greenland Valley {cited}"


@pytest.mark.parametrize("reader", ["shared", "paper"])
async def test_local_walk_reaches_the_second_hop_and_cites_both_passages(open_bridge, reader: str) -> None:  # noqa: ANN001
    """reader="paper": Eval's answer cites the passages of the facts it names; the default (issue 47): the
    one reader reads the collected facts' passages and cites those it answers from."""
    backend = ScriptedBackend(rules=[("Keep only the facts", select), ("Can the question be answered", evaluate),
                                     ("targeted sub-questions", '{"questions": []}'),
                                     ("Answer the question using only the numbered passages below", read)])
    answer = await open_bridge(backend).aask(QUESTION, method="topg", k=2, reader=reader)
    assert answer.text == "Greenland Valley" and answer.status == "answered"
    # SuggestNaive's seeds hold only the first hop; the query-aware walk over shared entities reaches the second
    kept = [s.outputs["kept"] for s in answer.trace if s.action == "select"]
    assert kept == [[PATH[0]], [PATH[1]]]
    assert {c.doc_id for c in answer.citations} == {"c2", "c3"}
    assert [n.text for n in answer.evidence.nodes if n.type == "proposition"] == list(PATH)


async def test_global_mode_without_an_llm_runs_the_global_path_and_says_so(open_bridge) -> None:  # noqa: ANN001
    tg = open_bridge(None)
    answer = await tg.aask("What is known about Acme Corp?", method="topg", mode="global", k=2, breadth=2,
                           min_facts=5, min_community_size=2)
    local = await tg.aask("What is known about Acme Corp?", method="topg", k=2)
    assert answer.status == "evidence_only" and answer.stats["mode"] == "global"
    assert "Alg. 2 anchors" in answer.stats["variant"] and "Suggest-local" in local.stats["variant"]
    actions = [s.action for s in answer.trace]
    assert "suggest.global" in actions and "communities" in actions and "suggest.local" not in actions
    assert answer.citations and answer.stats["facts"] >= 5


async def test_leiden_runs_once_per_version_of_the_index(open_bridge, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    runs: list[int] = []
    real = topg_communities.hierarchical_leiden

    def counted(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        runs.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(topg_communities, "hierarchical_leiden", counted)
    options = {"method": "topg", "mode": "global", "k": 2, "min_facts": 3, "min_community_size": 2}
    tg = open_bridge(None)
    first = await tg.aask("Acme Corp?", **options)
    second = await tg.aask("Rivertown?", **options)
    tg = open_bridge(None)  # another process: the cache is in the index
    third = await tg.aask("Greenland Valley?", **options)
    assert len(runs) == 1
    chosen = [next(s.outputs["chosen"] for s in a.trace if s.action == "communities") for a in (first, second, third)]
    assert all(c >= 1 for c in chosen)
    tg.index([FIXTURES / "corpus_small.jsonl"], openie=FIXTURES / "openie_sample.jsonl")  # a new version
    await tg.aask("Acme Corp?", **options)
    assert len(runs) == 2
    tg = open_bridge(None)
    tg.store.set_meta(topg_communities.META_KEY, '{"key": "of another version"}')
    tg.store.read_only = True  # a read-only index computes them but keeps nothing
    tg.store.set_meta = None  # (any write would fail)
    await tg.aask("Acme Corp and Rivertown?", **options)
    assert len(runs) == 3 and tg.store.get_meta(topg_communities.META_KEY) == '{"key": "of another version"}'


async def test_call_budget_ends_local_and_global_runs_with_an_outcome(open_bridge) -> None:  # noqa: ANN001
    backend = ScriptedBackend(rules=[("Keep only the facts", select), ("Can the question be answered",
                                                                      lambda r: '{"reason": "no", "verdict": "no"}'),
                                     ("targeted sub-questions", '{"questions": ["Where is Rivertown?"]}'),
                                     ("complementary sub-questions", '{"questions": ["a?", "b?"]}'),
                                     ("rate how useful", '{"answer": "points", "score": 50}'),
                                     ("partial analyses", "Report.")])
    tg = open_bridge(backend)
    local = await tg.aask(QUESTION, method="topg", k=1, max_calls=2)
    assert local.status == "failed" and local.stats["outcome"] == "budget_reached"
    assert local.cost.calls == 2 and "call budget (max_calls=2)" in local.message
    actions = [s.action for s in local.trace]  # the evidence in the order the reader would have read it
    assert actions.index("budget_reached") < actions.index("rank_collected")
    # global: decomposition and the two seeding Selects spend the budget; the report keeps its call
    spent = await tg.aask("What about Acme Corp?", method="topg", mode="global", breadth=2, max_calls=4,
                          min_community_size=2)
    assert spent.stats["outcome"] == "budget_reached" and spent.cost.calls == 3
    assert spent.status == "failed" and "no community" in spent.message
