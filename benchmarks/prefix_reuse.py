"""Prompt tokens sent and prompt tokens a local server evaluates, per question and method (issue #48),
with a scripted model on the shipped fixture corpus (tests/fixtures/bridge_*) or on an index you name.

A local server keeps the KV cache of its previous request and evaluates only what follows the longest
common token prefix with it (llama-cpp-python: "Llama.generate: N prefix-match hit, remaining M prompt
tokens to eval"; llama.cpp's `cache_prompt`). ``PrefixCache`` plays that on the rendered prompts: the
ChatML text a Qwen2.5 template makes of the messages, its special tokens one token each and the rest
counted with the project's TokenCounter; a token is evaluated when it ends past the common prefix.
``states=1`` is one slot (llama-cpp-python without ``--cache``, llama.cpp's single slot); more states
play llama-cpp-python's ``--cache``, which restores the saved state with the longest common prefix.
The state kept after a call holds its reply too, as the server's KV cache does. Calls reach the play
in the order a one-slot server answers them (first come, first served), and a prompt asked again within
the run is answered by the run's response cache, as a user's index answers it.

The scripted model follows every format and reads its prompts (kgr's agent walks the graph from the
question's names); the figures are the methods' prompt structure on real passages, not a model's quality.

    .venv/bin/python benchmarks/prefix_reuse.py [--methods kgr kgr:strategy=tot,depth=3 ppr ...]
        [--index path/to/index.db --questions questions.jsonl --limit 10]
        [--repeats] [--finish-after 9] [--context-window 4096] [--states 8]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import re
import statistics
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from thinkgraph.api import ThinkGraph  # noqa: E402
from thinkgraph.config import Settings  # noqa: E402
from thinkgraph.embed.hashing import HashingEmbedder  # noqa: E402
from thinkgraph.llm.backend import ChatRequest, ChatResult, DeltaSink  # noqa: E402
from thinkgraph.testing import ScriptedBackend  # noqa: E402
from thinkgraph.tokens import TokenCounter  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
START, END = "<|im_start|>", "<|im_end|>"  # ChatML (Qwen2.5): one token each
NAME = r"[A-Z][a-z]+(?: [A-Z][a-z]+)*"  # a capitalised name
LONG_NAME = r"[A-Z][a-z]+(?: [A-Z][a-z]+)+"  # of two words or more
READ = "Answer the question using only the numbered passages below"  # the one reader (methods/reader.py)
AGENT = "alternating Thought, Action and Observation"  # kgr's agent step
QUESTIONS = ["Where is the company founded by Alice Stone based?",
             "Which valley is the town where Carol Diaz was born in?",
             "Where does the engineer Bob Reed work?",
             "Which company is based in the town that lies in the Greenland Valley?"]
METHODS = ["kgr", "kgr:strategy=tot,depth=3,k=2,t=2", "ppr", "a2rag", "topg", "tog3:horizon=1"]


def render(messages: Sequence[dict[str, str]]) -> list[str]:
    """The prompt as a Qwen2.5 chat template writes it, in pieces: special tokens alone, the generation
    prompt (the assistant's header) last."""
    pieces: list[str] = []
    for m in messages:
        pieces += [START, f"{m['role']}\n{m['content']}", END, "\n"]
    return pieces + [START, "assistant\n"]


@dataclass
class Tokens:
    text: str
    ends: list[int]  # each token's end offset in ``text``

    @classmethod
    def of(cls, pieces: Sequence[str], counter: TokenCounter) -> Tokens:
        text, ends = "", []
        for piece in pieces:
            base = len(text)
            text += piece
            ends += [len(text)] if piece in (START, END) else [base + e for _, e in counter.offsets(piece)]
        return cls(text, ends)

    def after(self, chars: int) -> int:
        """Tokens that end past the first ``chars`` characters (those a cache holding them evaluates)."""
        return sum(1 for e in self.ends if e > chars)


def common_prefix(a: str, b: str) -> int:
    return len(os.path.commonprefix([a, b]))


@dataclass
class Call:
    sent: int
    evaluated: int


@dataclass
class PrefixCache:
    """A server's prompt cache: the slot holds the last request's prompt and reply; ``states`` > 1 keeps
    that many saved states (the latest used last) and restores the one sharing the longest prefix."""

    counter: TokenCounter
    states: int = 1
    saved: list[str] = field(default_factory=list)

    def call(self, messages: Sequence[dict[str, str]], reply: str = "") -> Call:
        tokens = Tokens.of(render(messages), self.counter)
        shared = [common_prefix(s, tokens.text) for s in self.saved]
        best = max(shared, default=0)
        if best:  # the restored state is the latest used (the cache evicts the least recently used)
            self.saved.append(self.saved.pop(shared.index(best)))
        self.saved = (self.saved + [tokens.text + reply])[-self.states:]
        return Call(len(tokens.ends), tokens.after(best))


def measure(calls: Sequence[tuple[Sequence[dict[str, str]], str]], counter: TokenCounter | None = None,
            states: int = 1, cache: PrefixCache | None = None) -> list[Call]:
    """Tokens sent and evaluated of each (messages, reply), in order, through one cache."""
    cache = cache or PrefixCache(counter or TokenCounter(), states)
    return [cache.call(m, r) for m, r in calls]


class Recording(ScriptedBackend):
    """A scripted backend that keeps each call's messages and reply in the order a one-slot server
    answers them: one at a time, first come first served (a request sent while others wait, as a
    repair after its step's reply, waits behind them)."""

    def __init__(self, rules: list[tuple[str, Any]]) -> None:
        super().__init__(rules=rules)
        self.calls: list[tuple[tuple[dict[str, str], ...], str]] = []
        self._slot: asyncio.Lock | None = None

    async def chat(self, request: ChatRequest, on_delta: DeltaSink | None = None) -> ChatResult:
        self._slot = self._slot or asyncio.Lock()  # (made on the loop that uses it)
        async with self._slot:  # asyncio.Lock wakes its waiters in order
            await asyncio.sleep(0)  # the requests sent together arrive before the first is answered
            result = await super().chat(request, on_delta)
            self.calls.append((request.messages, result.text))
        return result


class MemoryCache(dict[str, Any]):
    """A response cache of one run (the index's own would answer a later run from the first)."""

    def cache_get(self, key: str) -> Any | None:
        return self.get(key)

    def cache_put(self, key: str, value: Any) -> None:
        self[key] = value


# --- the scripted model ---------------------------------------------------------------------------

def _last_user(request: ChatRequest) -> str:
    return request.messages[-1]["content"]


def agent_walker(finish_after: int = 6, repeats: bool = False) -> Callable[[ChatRequest], str]:
    """kgr's agent, as a small model that follows the format: finds the question's first name, lists its
    passages, reads the first it has not read, looks up the next name a passage gives, and finishes
    after ``finish_after`` steps with the last name it read. ToT's j-th candidate takes the j-th of these
    where there are several. ``repeats``: steps 3 and 6 first repeat the step before (as small
    models do), and are asked again (kgr's repair)."""
    def reply(request: ChatRequest) -> str:
        text = "\n".join(m["content"] for m in request.messages).split("Now your task.")[-1]
        question = re.findall(r'for the question "(.*?)"', text)[-1]
        seen = re.findall(r"Observation \d+: (.*)", text)
        taken = re.findall(r"Action \d+: (.*)", text)
        names = re.findall(LONG_NAME, question) or [question]
        candidate = re.search(r"Candidate (\d+) of", text)
        pick = int(candidate.group(1)) - 1 if candidate else 0  # a ToT candidate takes its own way
        if not seen:  # (a candidate past the question's names asks in its own words)
            first = names[pick % len(names)] + (f" ({pick})" if pick >= len(names) else "")
            return f"Thought 1: I need {first}.\nAction 1: RetrieveNode[{first}]"
        n, last = len(seen) + 1, seen[-1]
        node = re.search(r"node is (\S+) \(", last)
        passage = re.search(r"The text of \S+ is: (.*)", last)
        found = re.findall(NAME, passage.group(1) if passage else last)
        unread = [c for c in re.findall(r"\b(chunk:\w+|P\d+)\b", last) if f"NodeFeature[{c}, text]" not in taken]
        repair = "Write step" in _last_user(request)
        if repeats and n in (3, 6) and not repair:
            return f"Thought {n}: Again.\nAction {n}: {taken[-1]}"
        if n > finish_after:
            return f"Thought {n}: That answers it.\nAction {n}: Finish[{found[-1] if found else 'Unknown'}]"
        options = [f"NeighborCheck[{node.group(1)}, mentioned_in]"] if node else []
        options += [f"NodeFeature[{c}, text]" for c in unread] or [f"RetrieveNode[{f}]" for f in found]
        options = [o for o in options if o not in taken] or ["RetrieveNode[Moon]"]
        return f"Thought {n}: Next, {found[0] if found else 'more'}.\nAction {n}: {options[pick % len(options)]}"

    return reply


def reader(request: ChatRequest) -> str:
    """The one reader: the first passage it is shown."""
    first = re.search(r"^\[1\] (.*)$", _last_user(request), re.MULTILINE)
    words = re.findall(NAME, first.group(1)) if first else []
    return f"Asks for: a name\nFacts: [1] says so.\nAnswer: {words[-1]} [1]" if words else "Answer: Unknown"


VERDICT = json.dumps({"reason": "stated", "relevant": "yes", "grounded": "yes", "resolves": "yes", "verdict": "yes"})


def rules(finish_after: int = 6, repeats: bool = False) -> list[tuple[str, Any]]:
    """The scripted model's replies: the first rule whose text the prompt holds answers it."""
    return [(READ, reader), (AGENT, agent_walker(finish_after, repeats)), *RULES]


RULES: list[tuple[str, Any]] = [
    ("Several reasoning chains", "The best choices are: 1, 2"),
    ("Estimate the probability", "0.5"), ("This is the last step", reader),
    ("Check this answer", VERDICT), ("Reply with the rewritten question only", "Which town is it?"),
    ("Keep only the facts", json.dumps({"keep": [1, 2, 3]})),
    ("Can the question be answered from the facts", json.dumps({"reason": "two hops", "verdict": "yes"})),
    ("targeted sub-questions", json.dumps({"questions": []})),
    ("Give up to", "Alice Stone^Acme Corp"), ("Answer the query using only the context", "Acme Corp"),
    ("Judge whether the context", json.dumps({"reason": "enough", "verdict": "yes"})),
    ("Write the next question", "Next question: Where is Acme Corp based?"), ("Refine it:", "None"),
    ("build a small knowledge graph", json.dumps({"entities": []})),
    ("", "Answer: Unknown")]


# --- the run -------------------------------------------------------------------------------------

@dataclass
class Row:
    method: str
    calls: list[int] = field(default_factory=list)
    sent: list[int] = field(default_factory=list)
    one_slot: list[int] = field(default_factory=list)
    restored: list[int] = field(default_factory=list)


def split_method(spec: str) -> tuple[str, dict[str, Any]]:
    name, _, raw = spec.partition(":")
    options: dict[str, Any] = {}
    for pair in filter(None, raw.split(",")):
        key, _, value = pair.partition("=")
        options[key] = int(value) if value.isdigit() else value
    return name, options


async def run_method(open_index: Callable[[Recording], ThinkGraph], spec: str, questions: Sequence[str],
                     counter: TokenCounter, states: int, context_window: int | None = None,
                     finish_after: int = 6, repeats: bool = False) -> Row:
    """The method over the questions, one after another on one server (its caches kept between them)."""
    backend = Recording(rules(finish_after, repeats))
    one, many = PrefixCache(counter, 1), PrefixCache(counter, states)
    row = Row(spec)
    name, options = split_method(spec)
    with open_index(backend) as tg:
        if context_window:
            tg.settings.llm.context_window = context_window
        if tg.llm is not None:  # the run's own response cache: a prompt asked again is not sent again
            tg.llm.cache = MemoryCache()
        for question in questions:
            start = len(backend.calls)
            await tg.aask(question, name, **options)
            asked = backend.calls[start:]
            single = measure(asked, cache=one)
            row.calls.append(len(asked))
            row.sent.append(sum(c.sent for c in single))
            row.one_slot.append(sum(c.evaluated for c in single))
            row.restored.append(sum(c.evaluated for c in measure(asked, cache=many)))
    return row


def fixture_index(folder: Path) -> Callable[[Recording], ThinkGraph]:
    settings = Settings()
    settings.index.communities = "always"  # tog3 reads communities
    path = folder / "bridge.db"
    with ThinkGraph(path, settings=settings, embedder=HashingEmbedder(128, "test:hash"), create=True) as tg:
        tg.index([FIXTURES / "bridge_corpus.jsonl"], openie=FIXTURES / "bridge_openie.jsonl")
    return lambda backend: ThinkGraph.open(path, settings=Settings(), embedder=HashingEmbedder(128, "test:hash"),
                                           backend=backend)


def table(rows: Sequence[Row], states: int) -> str:
    lines = [f"| method | calls | tokens sent | evaluated, one slot | evaluated, {states} saved states |",
             "|---|---|---|---|---|"]
    for r in rows:
        sent = statistics.mean(r.sent)
        lines.append(f"| {r.method} | {statistics.mean(r.calls):.1f} | {sent:.0f} | "
                     f"{statistics.mean(r.one_slot):.0f} ({100 * statistics.mean(r.one_slot) / sent:.0f}%) | "
                     f"{statistics.mean(r.restored):.0f} ({100 * statistics.mean(r.restored) / sent:.0f}%) |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--methods", nargs="+", default=METHODS)
    parser.add_argument("--index", type=Path, help="an index to run on (default: the fixture corpus)")
    parser.add_argument("--questions", type=Path, help="a JSONL file of {\"question\": ...} (with --index)")
    parser.add_argument("--limit", type=int, default=4, help="questions of --questions")
    parser.add_argument("--states", type=int, default=8, help="states the --cache play keeps")
    parser.add_argument("--context-window", type=int, help="the model's context window (default: the settings')")
    parser.add_argument("--finish-after", type=int, default=6, help="steps the scripted kgr agent takes")
    parser.add_argument("--repeats", action="store_true", help="the kgr agent repeats steps 3 and 6 (repaired)")
    args = parser.parse_args(argv)
    counter = TokenCounter()
    questions = QUESTIONS
    if args.questions:
        questions = [json.loads(line)["question"] for line in itertools.islice(args.questions.open(), args.limit)]
    with tempfile.TemporaryDirectory() as tmp:
        if args.index:
            index = args.index
            opener: Callable[[Recording], ThinkGraph] = lambda b: ThinkGraph.open(index, backend=b)  # noqa: E731
        else:
            opener = fixture_index(Path(tmp))
        rows = [asyncio.run(run_method(opener, m, questions, counter, args.states, args.context_window,
                                       args.finish_after, args.repeats)) for m in args.methods]
    print(f"{len(questions)} questions, means a question (tokens: the TokenCounter's, on the ChatML text)")
    print(table(rows, args.states))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
