"""kgr's prompts for a server's prompt cache (issue #48): consecutive calls of one question share their
longest prefix. The agent's task (instructions, examples, graph definition, question) is the same
message at every step; the steps are turns; what varies (the closing, its hint, a ToT candidate's
variant) comes after the newest observation; and a long chain's earlier observations are shortened
alike at every step. Measured with benchmarks/prefix_reuse.py's play of a one-slot cache."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from support import FIXTURES, HashEmbedder, load_benchmark
from test_kgr_grounding import QUESTION
from thinkgraph.methods.kgr.actions import GraphEnvironment
from thinkgraph.methods.kgr.agent import AgentStepper
from thinkgraph.methods.kgr.prompts import AGENT_TURN, VARIANT
from thinkgraph.methods.kgr.state import SHORTENED, ChainState, Step
from thinkgraph.methods.kgr.trace import Recorder
from thinkgraph.tokens import TokenCounter
from thinkgraph.typedkg import TypedGraph
from thinkgraph.typedkg.builder import TypedGraphBuilder
from thinkgraph.typedkg.importers import load_grbench

prefix_reuse = load_benchmark("prefix_reuse")
AGENT = prefix_reuse.AGENT
CLOSING = "\n\nNow write step"
Messages = Sequence[dict[str, str]]


def rendered(messages: Messages) -> str:
    return "".join(prefix_reuse.render(messages))


def without_closing(messages: Messages) -> list[dict[str, str]]:
    """The conversation less its closing (what follows the newest observation)."""
    last = messages[-1]["content"].split(CLOSING)[0]
    return [*messages[:-1], {"role": messages[-1]["role"], "content": last}]


def test_the_cache_play_evaluates_what_follows_the_longest_common_prefix() -> None:
    cache = prefix_reuse.PrefixCache(TokenCounter())
    task = [{"role": "user", "content": "Graph definition: a, b and c.\n\nQuestion: who?"}]
    first = cache.call(task, "Thought 1: find a.\nAction 1: RetrieveNode[a]")
    assert first.evaluated == first.sent > 10
    steps = [*task, {"role": "assistant", "content": "Thought 1: find a.\nAction 1: RetrieveNode[a]"},
             {"role": "user", "content": "Observation 1: a is here."}]
    second = cache.call(steps, "")
    # the task and the reply were in the slot: the observation, its turn markers and the next header remain
    assert second.evaluated == prefix_reuse.Tokens.of(["Observation 1: a is here."], TokenCounter()).after(0) + 6
    assert cache.call(steps, "").evaluated == 0
    cache.call([{"role": "user", "content": "Something else entirely."}])
    assert cache.call(steps, "").evaluated == second.sent - 2  # one slot: all but the shared "<|im_start|>user"
    restoring = prefix_reuse.PrefixCache(TokenCounter(), states=4)  # llama-cpp-python's --cache
    prefix_reuse.measure([(steps, ""), ([{"role": "user", "content": "Something else."}], "")], cache=restoring)
    assert restoring.call(steps, "").evaluated == 0


async def test_consecutive_agent_steps_share_all_but_the_closing(open_bridge) -> None:  # noqa: ANN001
    backend = prefix_reuse.Recording(prefix_reuse.rules())
    await open_bridge(backend).aask(QUESTION, "kgr")
    steps = [(m, r) for m, r in backend.calls if AGENT in m[0]["content"]]
    assert len(steps) >= 5
    task = steps[0][0][0]["content"]
    assert "Graph definition:" in task and task.endswith(f'for the question "{QUESTION}".')
    cache = prefix_reuse.PrefixCache(TokenCounter())
    for (before, reply), (after, _) in itertools.pairwise(steps):
        assert after[0]["content"] == task  # the task: instructions, examples, graph definition, question
        kept = without_closing(before)
        assert list(after[:len(kept)]) == kept  # every earlier turn, the newest observation less its closing
        assert rendered(after).startswith(rendered(kept).removesuffix("<|im_end|>\n<|im_start|>assistant\n"))
        cache.call(before, reply)
        new = prefix_reuse.Tokens.of([after[-1]["content"], after[-2]["content"]], TokenCounter()).after(0)
        # only the step's reply (as re-written), its observation and closing, and their turns' markers
        assert cache.call(after, "").evaluated <= new + 12


async def test_a_tree_searchs_candidates_differ_only_in_their_variant_at_the_end(open_bridge) -> None:  # noqa: ANN001
    backend = prefix_reuse.Recording(prefix_reuse.rules())
    await open_bridge(backend).aask(QUESTION, "kgr", strategy="tot", k=2, t=2, steps=3)
    steps = [m for m, _ in backend.calls if AGENT in m[0]["content"]]
    roots, deeper = [m for m in steps if len(m) == 1], [m for m in steps if len(m) == 3]
    task = deeper[0][0]["content"]
    assert [m[0]["content"] for m in roots] == [task + VARIANT.format(index=j, count=2) for j in (1, 2)]
    for a, b in itertools.pairwise(deeper[:2]):  # the two candidates of one state
        assert a[:2] == b[:2] and a[2]["content"].split("\n(Candidate")[0] == b[2]["content"].split("\n(Candidate")[0]
        assert b[2]["content"].endswith(VARIANT.format(index=2, count=2))



def shares_conversation(request: Messages, conversation: Messages) -> bool:
    """Whether ``request`` holds ``conversation``'s turns as they are (its last one may go on)."""
    head = list(request[:len(conversation)])
    return len(head) == len(conversation) and head[:-1] == list(conversation[:-1]) and \
        head[-1]["content"].startswith(conversation[-1]["content"])


async def test_a_tree_searchs_repair_follows_its_states_candidates(open_bridge) -> None:  # noqa: ANN001
    """A one-slot server answers in arrival order: each state's candidates are asked together, and
    their repairs come before the next state's candidates, so the server still holds their state's
    conversation (not another state's)."""
    backend = prefix_reuse.Recording(prefix_reuse.rules(repeats=True))
    answer = await open_bridge(backend).aask(QUESTION, "kgr", strategy="tot", k=2, t=2, steps=4)
    assert answer.stats["repairs"] >= 3
    asked = [m for m, _ in backend.calls]
    repairs = [i for i, m in enumerate(asked) if AGENT in m[0]["content"] and "Write step" in m[-1]["content"]]
    for i in repairs:
        state = without_closing(asked[i][:-2])  # the conversation of the state the repaired step went on from
        assert shares_conversation(asked[i - 1], state)

def long_chain(steps: int) -> list[Step]:
    return [Step(f"step {i}", f"RetrieveNode[thing {i}]", f"({i}) " + " ".join(f"w{i}x{j}" for j in range(150)))
            for i in range(1, steps + 1)]


def prompts(stepper: AgentStepper, chain: list[Step]) -> list[tuple[list[dict[str, str]], str]]:
    """Each step's prompt along the chain and the reply that wrote the next step."""
    return [(stepper.messages(ChainState(0, chain[:n], depth=n), ""),
             AGENT_TURN.format(n=n + 1, thought=chain[n].thought, action=chain[n].action))
            for n in range(len(chain))]


def test_a_long_chain_shortens_alike_at_every_step_and_is_read_once(kg, tmp_path: Path,  # noqa: ANN001
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    builder = TypedGraphBuilder()
    load_grbench(FIXTURES / "grbench_small.json", builder)
    env = GraphEnvironment(TypedGraph(builder.write(tmp_path / "g.kg", HashEmbedder()), HashEmbedder()))
    stepper = AgentStepper(kg(prefix_reuse.Recording([])).llm, env, "q?", Recorder(), itertools.count(1), limit=16)
    stepper.scratchpad_chars = 8000  # about eight of these observations
    chain = long_chain(16)
    after = prompts(stepper, chain)
    for (a, _), (b, _) in itertools.pairwise(after):
        turns_a, turns_b = [m["content"] for m in without_closing(a)], [m["content"] for m in b]
        short = [i for i, t in enumerate(turns_a) if SHORTENED in t]
        assert all(turns_b[i] == turns_a[i] for i in short)  # once shortened, shown the same from then on
        assert all(SHORTENED not in t for t in turns_b[-4:])  # the latest two observations whole
    last = [m["content"] for m in after[-1][0]]
    shortened = [i for i, t in enumerate(last) if SHORTENED in t]
    assert shortened and shortened == list(range(2, 2 + 2 * len(shortened), 2))  # the oldest first
    assert sum(map(len, ChainState(0, chain, depth=16).observations(8000, stable=True))) < 8000
    counter = TokenCounter()
    evaluated = sum(c.evaluated for c in prefix_reuse.measure(after, counter))
    original = ChainState.observations
    monkeypatch.setattr(ChainState, "observations", lambda self, m=None, stable=False: original(self, m))
    before = sum(c.evaluated for c in prefix_reuse.measure(prompts(stepper, chain), counter))
    # shortened anew at every step (to just under the bound), the turns after the oldest cut were read again:
    # 33,843 tokens evaluated along this chain against 18,529
    assert evaluated * 1.6 < before


def test_the_benchmark_prints_tokens_sent_and_evaluated_per_question(capsys: pytest.CaptureFixture[str]) -> None:
    assert prefix_reuse.main(["--methods", "kgr", "ppr"]) == 0
    rows = {line.split(" | ")[0].strip("| "): line for line in capsys.readouterr().out.splitlines() if "|" in line}
    sent, one, restored = (int(re.match(r"\s*(\d+)", cell).group(1)) for cell in rows["kgr"].split(" | ")[2:5])
    # one slot: kgr reads its task again at each question (the reader came between); restored, it does not
    assert restored < one < sent / 3 and "ppr" in rows
