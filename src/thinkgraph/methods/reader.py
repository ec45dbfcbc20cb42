"""The one reader: the final answer step every method shares (``ppr`` and the passage methods, and
``reader="shared"`` of ircot, a2rag, topg, tog3 and kgr), fed the passages the method's own steps
chose, in its order, with the notes its paper's final step reads beyond passages (ToG-3's
sub-answers and subgraph, kgr's relations followed, ToPG's selected facts, A2RAG's facts), where
``ppr``'s entity paths stand.

It is ``ppr``'s answer prompt word for word (``ANSWER_PROMPT`` with ``replies.ANSWER_FORMAT``: the
passages, a two-hop worked example, a reasoning line, the question last), the step that gave ``ppr``
its F1. A variant that asked for the kind of answer and the facts hop by hop before the answer, and
put a shared preamble first, scored 32.5 against its 44.0 on the first 20 MuSiQue dev questions (1
better, 3 worse; docs/answer-quality.md), and the same words with the answer format and its example
moved before the passages (so that a server could reuse them from one question to the next) 34.4 (1
better, 3 worse; docs/local-models.md), so the measured prompt stays. The reply is read by
``replies.read_answer`` (repair of marker-only replies, abstention detection, citations).

How much of each passage it shows is the run's ``[reader] evidence_sentences`` (0, the default: whole
passages, the prompt above byte for byte; N: each passage's N sentences that bear on the question and
its linked entities, retrieval/compaction.py), set for the question by ``methods/run.py`` (``reading``)
from the settings and the run's options. The reply's [n] still cite the original passages, so that
citations are narrowed to exact spans of the passage's own text.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from thinkgraph.config import ReaderSettings
from thinkgraph.methods.layout import Notes
from thinkgraph.methods.replies import AskedAnswer, answer_format, answer_trace, ask_answer
from thinkgraph.models import TraceStep
from thinkgraph.retrieval.compaction import Compacted, compact_passages
from thinkgraph.retrieval.evidence import ScoredPassage
from thinkgraph.tokens import TokenCounter

if TYPE_CHECKING:
    from thinkgraph.llm.service import LLM, Message

PROMPT_OVERHEAD_TOKENS = 260  # the prompt's own words and the answer format

ANSWER_PROMPT = """Answer the question using only the numbered passages below (the question is at the end).
{notes}
Passages:
{passages}

{answer_format}"""
# What a reply that copies the prompt repeats (read_answer checks ANSWER_FORMAT and its example too).
READER_INSTRUCTION = ANSWER_PROMPT.split("\n", 1)[0]


# The question's reader settings (``reading``); outside a run, the defaults: whole passages.
_SETTINGS: ContextVar[ReaderSettings | None] = ContextVar("thinkgraph_reader_settings", default=None)


@contextmanager
def reading(settings: ReaderSettings) -> Iterator[None]:
    """The reader's settings for what is asked inside (a task started inside inherits them)."""
    token = _SETTINGS.set(settings)
    try:
        yield
    finally:
        _SETTINGS.reset(token)


def reader_settings() -> ReaderSettings:
    return _SETTINGS.get() or ReaderSettings()


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


def compacted(question: str, passages: Sequence[ScoredPassage], notes: Sequence[Notes] = (),
              keep: int | None = None) -> list[Compacted] | None:
    """Each passage as the reader shows it with ``keep`` sentences (None: the run's setting), or None
    for whole passages. A sentence bears on the question by its words and, at half weight, by the
    notes' (the entities linked, the facts followed) and the other passages' titles."""
    keep = reader_settings().evidence_sentences if keep is None else keep
    if keep == 0:
        return None
    return compact_passages(question, [(p.title, p.text) for p in passages], keep,
                            [line for n in notes for line in n.lines])


def as_shown(passages: Sequence[ScoredPassage], cut: Sequence[Compacted] | None) -> list[ScoredPassage]:
    """The passages with the text the reader is shown (themselves when whole)."""
    return list(passages) if cut is None else [replace(p, text=c.text) for p, c in zip(passages, cut, strict=True)]


def fit_reader_passages(llm: LLM, given: ReaderInput, cut: Sequence[Compacted] | None = None) -> list[ScoredPassage]:
    """The passages, in the method's order, while they fit the context window with the notes and the
    question (the rest left out, not cut), counted as shown (``cut``: as ``compacted`` gives them)."""
    notes = "\n".join(n.render() for n in given.notes)
    budget = llm.settings.context_window - llm.settings.max_tokens.answer - PROMPT_OVERHEAD_TOKENS \
        - llm.counter.count(given.question) - llm.counter.count(notes)
    fitted = fit_passages(as_shown(given.passages, cut), budget, llm.counter)
    return list(given.passages[:len(fitted)])


def reader_prompt(question: str, passages: Sequence[ScoredPassage], notes: Sequence[Notes] = (), *,
                  keep: int | None = None) -> str:
    """The reader's prompt: its notes where ``ppr``'s entity paths stand, the numbered passages (each
    cut to ``keep`` sentences; None: the run's setting, 0: whole), the answer format with its worked
    example, the question last."""
    return _prompt(question, as_shown(passages, compacted(question, passages, notes, keep)), notes)


def _prompt(question: str, shown: Sequence[ScoredPassage], notes: Sequence[Notes]) -> str:
    rendered = "\n\n".join(n.render() for n in notes if n.lines)
    return ANSWER_PROMPT.format(notes=f"\n{rendered}\n" if rendered else "", passages=numbered_passages(shown),
                                answer_format=answer_format(question=question))


async def read(llm: LLM, given: ReaderInput, *, step: str, trace: list[TraceStep], agent: str = "responder",
               inputs: dict[str, object] | None = None) -> tuple[AskedAnswer[ScoredPassage], list[ScoredPassage]]:
    """Ask the reader; returns the answer as read (citations among the passages shown, whole) and the
    passages shown. The trace gets one step with the reply and what was read from it (with the spans of
    each passage shown, when they were cut)."""
    cut = compacted(given.question, given.passages, given.notes)
    shown = fit_reader_passages(llm, given, cut)
    prompt = _prompt(given.question, as_shown(shown, None if cut is None else cut[:len(shown)]), given.notes)
    messages: list[Message] = [{"role": "user", "content": prompt}]
    asked = await ask_answer(llm, messages, shown, step=step, prompt_template=ANSWER_PROMPT,
                             question=given.question)
    kept = {} if cut is None else {"evidence_sentences": reader_settings().evidence_sentences,
                                   "kept_spans": {p.chunk_id: c.kept for p, c in zip(shown, cut, strict=False)}}
    trace.append(answer_trace(agent, step, "READER", asked, {
        "passages": [p.chunk_id for p in shown], "left_out": len(given.passages) - len(shown),
        "notes": {n.title: len(n.lines) for n in given.notes if n.lines}, **kept, **(inputs or {})}, len(shown)))
    return asked, shown
