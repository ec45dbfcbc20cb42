"""Answering from retrieved passages with numbered citations; shared by the passage-based methods."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from thinkgraph.methods.base import NO_LLM_MESSAGE
from thinkgraph.methods.replies import answer_format, answer_trace, ask_answer
from thinkgraph.models import Answer, AnswerStatus, Citation, EvidenceSubgraph, Node, TraceStep
from thinkgraph.retrieval.evidence import Evidence, ScoredPassage
from thinkgraph.tokens import TokenCounter

if TYPE_CHECKING:  # (types only: an LLM-free ask does not load the HTTP client)
    from thinkgraph.llm.service import LLM, Message

ANSWER_STEP = "answer.from_passages"
PROMPT_OVERHEAD_TOKENS = 260  # the prompt's own words and the answer format

ANSWER_PROMPT = """Answer the question using only the numbered passages below (the question is at the end).
{paths}
Passages:
{passages}

{answer_format}"""


def _paths_block(evidence: Evidence) -> str:
    if not evidence.paths:
        return ""
    lines = "\n".join("- " + " ".join(p) for p in evidence.paths[:5])
    return f"\nEntity paths linking the question to the passages:\n{lines}\n"


def fit_passages(passages: list[ScoredPassage], budget_tokens: int, counter: TokenCounter) -> list[ScoredPassage]:
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


def numbered_passages(passages: Sequence[ScoredPassage], sep: str = "\n\n") -> str:
    return sep.join(f"[{i}] {p.title + ': ' if p.title else ''}{p.text}" for i, p in enumerate(passages, 1))


def citations_for(passages: list[ScoredPassage]) -> list[Citation]:
    return [Citation(doc_id=p.doc_id, chunk_id=p.chunk_id, start=p.start, end=p.end, quote=p.text[:300],
                     score=p.score) for p in passages]


def evidence_subgraph(evidence: Evidence, cited: Sequence[ScoredPassage] | None = None) -> EvidenceSubgraph:
    """The retrieved passages and seeds as nodes, with the entity paths to the passages. A path reads
    "[n] A -rel-> B": n numbers its passage as the retrieval ranked it, or, given an answer's ``cited``
    passages, as the answer's citations are numbered; paths to passages the answer does not cite are
    left out, so that every [n] on screen is the passage shown as [n]."""
    nodes = [Node(p.chunk_id, "chunk", p.text, {"doc_id": p.doc_id, "score": p.score}) for p in evidence.passages]
    nodes += [Node(eid, "entity", name, {"seed_weight": w}) for eid, name, w in evidence.seeds]
    paths = list(zip(evidence.path_ids, evidence.paths, evidence.path_passages, strict=True))
    if cited is not None:
        number = {p.chunk_id: i for i, p in enumerate(cited, 1)}
        paths = [(ids, [f"[{number[chunk]}]", *text[1:]], chunk) for ids, text, chunk in paths if chunk in number]
    return EvidenceSubgraph(nodes=nodes, paths=[list(ids) for ids, _, _ in paths],
                            path_texts=[" ".join(text) for _, text, _ in paths])


def evidence_only(question: str, method: str, evidence: Evidence, trace: list[TraceStep]) -> Answer:
    return Answer(question=question, method=method, text=None, status=AnswerStatus.EVIDENCE_ONLY,
                  citations=citations_for(evidence.passages), evidence=evidence_subgraph(evidence),
                  trace=trace, message=NO_LLM_MESSAGE)


async def answer_from_evidence(llm: LLM, question: str, method: str, evidence: Evidence,
                               trace: list[TraceStep]) -> Answer:
    budget = llm.settings.context_window - llm.settings.max_tokens.answer - PROMPT_OVERHEAD_TOKENS \
        - llm.counter.count(question)
    passages = fit_passages(evidence.passages, budget, llm.counter)
    numbered = numbered_passages(passages)
    messages: list[Message] = [{"role": "user", "content": ANSWER_PROMPT.format(
        paths=_paths_block(evidence), passages=numbered, answer_format=answer_format(question=question))}]
    asked = await ask_answer(llm, messages, passages, step=ANSWER_STEP, prompt_template=ANSWER_PROMPT)
    trace.append(answer_trace("responder", ANSWER_STEP, "ANSWER_PROMPT", asked, {
        "passages": [p.chunk_id for p in passages], "left_out": len(evidence.passages) - len(passages)},
        len(passages)))
    read = asked.read
    return Answer(question=question, method=method, text=read.text, status=read.status, message=read.message,
                  citations=citations_for(read.cited), evidence=evidence_subgraph(evidence, read.cited),
                  trace=trace)
