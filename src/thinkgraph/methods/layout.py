"""The one prompt layout every call about a question shares, so that a local server reuses the longest
prefix it can (llama.cpp and llama-cpp-python keep the previous request's KV cache; vLLM and Ollama
cache prefixes): the fixed preamble first, then the evidence, then the step's own instruction, the
question last. Consecutive calls of one question that show the same evidence differ only after it.

The preamble is the first part of the user message, not a system message: some chat templates drop
system messages (llama-cpp-python's Gemma format does), and a prefix is reused the same either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from thinkgraph.llm.context import Message

PREAMBLE = ("You work on a question using only the evidence given below (numbered passages and, where "
            "given, facts from a knowledge graph), not prior knowledge. The question is at the end.")


@dataclass(frozen=True, slots=True)
class Notes:
    """A titled list of lines a step reads beside the passages: facts from the graph, sub-questions
    answered on the way, the relations a chain followed."""

    title: str
    lines: Sequence[str] = field(default_factory=tuple)

    def render(self) -> str:
        return f"{self.title}:\n" + "\n".join(f"- {line}" for line in self.lines) if self.lines else ""


def evidence_block(passages: str, notes: Sequence[Notes] = ()) -> str:
    """The evidence as every step of a question shows it: the notes, then the numbered passages."""
    parts = [n.render() for n in notes if n.lines]
    parts.append(f"Passages:\n{passages}" if passages else "Passages: (none)")
    return "\n\n".join(parts)


def question_prompt(evidence: str, instruction: str, question: str) -> list[Message]:
    """One user message: preamble, evidence, the step's instruction, the question last."""
    flat = " ".join(question.split())
    return [{"role": "user", "content": f"{PREAMBLE}\n\n{evidence}\n\n{instruction}\n\nQuestion: {flat}"}]
