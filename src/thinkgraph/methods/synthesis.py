"""Answering from retrieved passages with numbered citations; shared by the passage-based methods."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from thinkgraph.methods.base import NO_LLM_MESSAGE
from thinkgraph.methods.layout import Notes
from thinkgraph.methods.reader import (
    PROMPT_OVERHEAD_TOKENS,
    ReaderInput,
    fit_passages,
    numbered_passages,
    read,
)
from thinkgraph.models import Answer, AnswerStatus, Citation, EvidenceSubgraph, Node, TraceStep
from thinkgraph.retrieval.evidence import Evidence, ScoredPassage

__all__ = ["PROMPT_OVERHEAD_TOKENS", "answer_from_evidence", "citations_for", "evidence_only", "evidence_subgraph",
           "fit_passages", "numbered_passages", "path_notes"]

if TYPE_CHECKING:  # (types only: an LLM-free ask does not load the HTTP client)
    from thinkgraph.llm.service import LLM

ANSWER_STEP = "answer.from_passages"
PATHS_TITLE = "Entity paths linking the question to the passages"


def path_notes(evidence: Evidence) -> list[Notes]:
    """The walk's entity paths to the passages, as the reader's notes (the first five)."""
    return [Notes(PATHS_TITLE, [" ".join(p) for p in evidence.paths[:5]])] if evidence.paths else []


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
    """The one reader (methods/reader.py) over the retrieved passages in their order, the entity paths
    beside them."""
    asked, _ = await read(llm, ReaderInput(question, evidence.passages, path_notes(evidence)), step=ANSWER_STEP,
                          trace=trace)
    read_reply = asked.read
    return Answer(question=question, method=method, text=read_reply.text, status=read_reply.status,
                  message=read_reply.message, citations=citations_for(read_reply.cited),
                  evidence=evidence_subgraph(evidence, read_reply.cited), trace=trace)
