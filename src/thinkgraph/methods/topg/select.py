"""Select's request (ToPG Eq. 2): the prompt and the reply schema for the suggested facts, in the form
``select_form`` names. "reasoned" (ours, the default) shows the facts first and the question last (the
one prompt layout, methods/layout.py), asks for a one-sentence reason before the numbers, and bounds the
numbers' count in the schema (``maxItems``: a server's grammar ends the list at ``select_max``), as the
yes/no judgements are asked (llm/judgement.py). "list" is the former form: the question first and a bare
list of numbers. Either way the first ``select_max`` numbers listed are kept."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field, create_model

from thinkgraph.llm.context import Message
from thinkgraph.llm.judgement import REASON_CHARS
from thinkgraph.methods.layout import question_prompt
from thinkgraph.methods.topg.prompts import SELECT, SELECT_MOST, SELECT_REASONED, SELECT_REASONED_MOST


class SelectReply(BaseModel):
    keep: list[int] = Field(default_factory=list)


class ReasonedSelectReply(BaseModel):
    # required, and first: a schema grammar writes required properties first, in this order
    reason: str = Field(max_length=REASON_CHARS)
    keep: list[int]


@dataclass(frozen=True, slots=True)
class SelectRequest:
    messages: list[Message]
    reply: type[SelectReply] | type[ReasonedSelectReply]  # ``keep``: the numbers of the facts kept
    bound: int | None  # the first ``bound`` numbers listed are kept (None: all listed)


def bounded_reply(most: int) -> type[ReasonedSelectReply]:
    """The reasoned reply whose schema caps ``keep`` at ``most`` items; a longer list from a server without
    a grammar still parses (the caller keeps its first ``most``)."""
    cap: dict[str, Any] = {"maxItems": most}
    return create_model("ReasonedSelectReply", __base__=ReasonedSelectReply,
                        keep=(list[int], Field(json_schema_extra=cap)))


def select_request(form: str, question: str, facts: str, suggested: int, most: int | None) -> SelectRequest:
    """The request for ``suggested`` facts (``facts``: numbered lines); ``most`` bounds what is kept where
    it is below the number suggested."""
    bound = most if most is not None and most < suggested else None
    if form == "list":
        prompt = SELECT.format(question=question, facts=facts, most=SELECT_MOST.format(n=bound) if bound else "")
        return SelectRequest([{"role": "user", "content": prompt}], SelectReply, bound)
    instruction = SELECT_REASONED.format(most=SELECT_REASONED_MOST.format(n=bound) if bound else "")
    reply = bounded_reply(bound) if bound else ReasonedSelectReply
    return SelectRequest(question_prompt(f"Facts:\n{facts}", instruction, question), reply, bound)
