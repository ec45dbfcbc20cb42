"""Select's request (ToPG Eq. 2): the prompt and the reply schema for the suggested facts, in the form
``select_form`` names. "list" (the default) asks with the question first for a bare list of numbers.
"reasoned" (ours, a switch) shows the facts first and the question last (the one prompt layout,
methods/layout.py), asks for a one-sentence reason before the numbers, and bounds the numbers' count in
the schema (``maxItems``: a server's grammar ends the list at ``select_max``), as the yes/no judgements
are asked (llm/judgement.py). Either way the first ``select_max`` numbers listed are kept."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from thinkgraph.llm.context import Message
from thinkgraph.llm.judgement import REASON_CHARS
from thinkgraph.llm.limits import bounded_list
from thinkgraph.methods.layout import question_prompt
from thinkgraph.methods.topg.prompts import SELECT, SELECT_MOST, SELECT_REASONED, SELECT_REASONED_MOST


class SelectReply(BaseModel):
    keep: list[int] = Field(default_factory=list)


class ReasonedSelectReply(BaseModel):
    # required, and first: a schema grammar writes required properties first, in this order
    reason: str = Field(max_length=REASON_CHARS)
    keep: list[int] = bounded_list()  # (required: no default) a looping reply fails and is repaired


@dataclass(frozen=True, slots=True)
class SelectRequest:
    messages: list[Message]
    reply: type[SelectReply] | type[ReasonedSelectReply]  # ``keep``: the numbers of the facts kept
    bound: int | None  # the first ``bound`` numbers listed are kept (None: all listed)


@functools.cache  # one class per bound: the LLM layer caches each class's schema
def bounded_reply(most: int) -> type[ReasonedSelectReply]:
    """The reasoned reply whose schema caps ``keep`` at ``most`` items; a longer list from a server without
    a grammar still parses (the caller keeps its first ``most``)."""
    cap: dict[str, Any] = {"maxItems": most}
    return create_model(f"ReasonedSelectReplyAtMost{most}", __base__=ReasonedSelectReply,
                        keep=(list[int], bounded_list(json_schema_extra=cap)))


def select_request(form: Literal["reasoned", "list"], question: str, facts: str, *, suggested: int,
                   most: int | None) -> SelectRequest:
    """The request for ``suggested`` facts (``facts``: numbered lines); ``most`` bounds what is kept where
    it is below the number suggested."""
    bound = most if most is not None and most < suggested else None
    if form == "reasoned":
        instruction = SELECT_REASONED.format(most=SELECT_REASONED_MOST.format(n=bound) if bound is not None else "")
        reply = bounded_reply(bound) if bound is not None else ReasonedSelectReply
        return SelectRequest(question_prompt(f"Facts:\n{facts}", instruction, question), reply, bound)
    most_line = SELECT_MOST.format(n=bound) if bound is not None else ""
    prompt = SELECT.format(question=question, facts=facts, most=most_line)
    return SelectRequest([{"role": "user", "content": prompt}], SelectReply, bound)
