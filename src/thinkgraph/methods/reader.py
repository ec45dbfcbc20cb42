"""The one reader: the final answer step every method shares (``ppr`` and the passage methods, and
``reader="shared"`` of ircot, a2rag, topg, tog3 and kgr), fed the passages the method's own steps
chose, in its order, with the notes its paper's final step reads beyond passages (ToG-3's
sub-answers and subgraph, kgr's relations followed, ToPG's selected facts, A2RAG's facts).

The reply is worked out before it is given: the kind of answer the question asks for (a person, a
date, yes or no), then the chain of facts hop by hop with their passages, then the answer of that
kind. A small model told only "the answer" wrote the bridge entity its chain passed through, or a
name where a date was asked for; writing the kind first and the chain out makes the last hop the
answer. The reply is read by ``replies.read_answer`` (repair of marker-only replies, abstention
detection, citations to the passages).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from thinkgraph.methods.layout import PREAMBLE, Notes, evidence_block, question_prompt
from thinkgraph.methods.replies import UNKNOWN, AskedAnswer, answer_trace, ask_answer
from thinkgraph.models import TraceStep
from thinkgraph.retrieval.evidence import ScoredPassage
from thinkgraph.tokens import TokenCounter

if TYPE_CHECKING:
    from thinkgraph.llm.service import LLM

PROMPT_OVERHEAD_TOKENS = 330  # the preamble, the instruction and its worked example

# The example is the one ANSWER_FORMAT uses (replies.EXAMPLE_WORDS detects a reply that copies it).
READER_INSTRUCTION = f"""Answer the question using only the numbered passages above (and the facts listed
with them). The answer may need facts from two or more passages combined: find the first fact, use it
to find the next, and answer what the question finally asks for, not an entity on the way to it.
Reply in this form:
Asks for: <the kind of answer the question wants: a person, a place, a date, a number, a name, yes or no>
Facts: <the facts that lead to the answer, one hop after another, each with its passage number>
Answer: <only the answer, in a few words of that kind> <the passages it rests on, like [2][5]>

For example, for "When was the college that Ada Kowal attended founded?":
Asks for: a date
Facts: Ada Kowal attended Dunmore College [3]. Dunmore College was founded in 1881 [1].
Answer: 1881 [1][3]

Write "Answer: {UNKNOWN}" only if nothing above, alone or combined, gives the answer."""


@dataclass(frozen=True, slots=True)
class ReaderInput:
    """What a method hands the reader: the passages in its own order and its notes."""

    question: str
    passages: Sequence[ScoredPassage]
    notes: Sequence[Notes] = ()


def numbered_passages(passages: Sequence[ScoredPassage], sep: str = "\n\n") -> str:
    return sep.join(f"[{i}] {p.title + ': ' if p.title else ''}{p.text}" for i, p in enumerate(passages, 1))


def fit_passages(passages: Sequence[ScoredPassage], budget_tokens: int, counter: TokenCounter) -> list[ScoredPassage]:
    """Passages in rank order while they fit the budget (the rest are left out, not cut)."""
    kept: list[ScoredPassage] = []
    used = 0
    for p in passages:
        cost = counter.count(p.text) + 12
        if used + cost > budget_tokens and kept:
            break
        kept.append(p)
        used += cost
    return kept


def fit_reader_passages(llm: LLM, given: ReaderInput) -> list[ScoredPassage]:
    """The passages, in the method's order, while they fit the context window with the notes and the
    question (the rest left out, not cut)."""
    notes = "\n".join(n.render() for n in given.notes)
    budget = llm.settings.context_window - llm.settings.max_tokens.answer - PROMPT_OVERHEAD_TOKENS \
        - llm.counter.count(given.question) - llm.counter.count(notes)
    return fit_passages(given.passages, budget, llm.counter)


async def read(llm: LLM, given: ReaderInput, *, step: str, trace: list[TraceStep], agent: str = "responder",
               inputs: dict[str, object] | None = None) -> tuple[AskedAnswer[ScoredPassage], list[ScoredPassage]]:
    """Ask the reader; returns the answer as read (citations among the passages shown) and the passages
    shown. The trace gets one step with the reply and what was read from it."""
    shown = fit_reader_passages(llm, given)
    evidence = evidence_block(numbered_passages(shown), given.notes)
    messages = question_prompt(evidence, READER_INSTRUCTION, given.question)
    asked = await ask_answer(llm, messages, shown, step=step, prompt_template=(READER_INSTRUCTION, PREAMBLE))
    trace.append(answer_trace(agent, step, "READER", asked, {
        "passages": [p.chunk_id for p in shown], "left_out": len(given.passages) - len(shown),
        "notes": {n.title: len(n.lines) for n in given.notes if n.lines}, **(inputs or {})}, len(shown)))
    return asked, shown
