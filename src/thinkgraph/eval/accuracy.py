"""GraphRAG-Bench's answer accuracy: statement-level fact checking by an LLM combined with the
semantic similarity of the answer to the reference (the answer-correctness measure GraphRAG-Bench
computes through Ragas). The LLM splits both texts into atomic statements and sorts them into
true positives (answer statements the reference supports), false positives (answer statements it
does not support) and false negatives (reference statements the answer misses);
factual F1 = TP / (TP + (FP + FN) / 2), and accuracy = 0.75 * F1 + 0.25 * cosine similarity."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, Field

from thinkgraph.embed.base import Embedder
from thinkgraph.errors import StructuredOutputError
from thinkgraph.llm.service import LLM

FACT_WEIGHT = 0.75  # the weights GraphRAG-Bench's answer correctness uses (Ragas defaults)
SIMILARITY_WEIGHT = 0.25

FACT_CHECK_PROMPT = """Break the answer and the reference answer to the question into short, self-contained
factual statements. Then sort them:
- "supported": statements of the answer that the reference answer supports;
- "unsupported": statements of the answer that the reference answer does not support;
- "missed": statements of the reference answer that the answer does not contain.
Reply with JSON only: {{"supported": [...], "unsupported": [...], "missed": [...]}}

Question: {question}
Reference answer: {reference}
Answer: {answer}"""


class FactCheck(BaseModel):
    supported: list[str] = Field(default_factory=list)
    unsupported: list[str] = Field(default_factory=list)
    missed: list[str] = Field(default_factory=list)


@dataclass(frozen=True, slots=True)
class AccuracyScore:
    accuracy: float
    factual_f1: float
    similarity: float


def factual_f1(tp: int, fp: int, fn: int) -> float:
    denominator = tp + 0.5 * (fp + fn)
    return tp / denominator if denominator else 0.0


def semantic_similarity(embedder: Embedder, answer: str, reference: str) -> float:
    vectors = embedder.embed([answer, reference])
    return float(np.clip(vectors[0] @ vectors[1], 0.0, 1.0))


async def answer_accuracy(llm: LLM, embedder: Embedder, question: str, reference: str,
                          answer: str | None) -> AccuracyScore | None:
    """None when the fact check could not be parsed (counted by the LLM layer); 0 for no answer."""
    if not answer or not answer.strip():
        return AccuracyScore(0.0, 0.0, 0.0)
    prompt = FACT_CHECK_PROMPT.format(question=question, reference=reference, answer=answer)
    try:
        check = await llm.json([{"role": "user", "content": prompt}], FactCheck, step="eval.judge.accuracy",
                               kind="extraction")
    except StructuredOutputError:
        return None
    f1 = factual_f1(len(check.supported), len(check.unsupported), len(check.missed))
    similarity = semantic_similarity(embedder, answer, reference)
    return AccuracyScore(FACT_WEIGHT * f1 + SIMILARITY_WEIGHT * similarity, f1, similarity)
