"""Failure-aware query rewrite (eq. 6): the type-conditioned prompt, asked again once when the reply is
no new question, and the reading of the reply."""

from __future__ import annotations

import re
from dataclasses import dataclass

from thinkgraph.llm.echo import echoes_instructions
from thinkgraph.llm.service import LLM, Message
from thinkgraph.methods.a2rag.prompts import (
    ANSWER,
    ASKS_ABOUT_INSTRUCTIONS,
    ECHOED_INSTRUCTIONS,
    REWRITE,
    REWRITE_AGAIN,
    SAME_QUESTION,
)
from thinkgraph.methods.layout import PREAMBLE
from thinkgraph.methods.reader import READER_INSTRUCTION
from thinkgraph.methods.replies import answer_part
from thinkgraph.names import entities_in, is_value
from thinkgraph.retrieval.compaction import stems

_REASONING_LABEL = re.compile(r"^\s*(?:reasoning|thought|because)\s*:\s*", re.IGNORECASE)
_PREAMBLE = re.compile(r"^(?:(?:sure|okay|ok|certainly|here)\b[^:\n]*:|rewritten question\s*:)\s*", re.IGNORECASE)


@dataclass(frozen=True)
class Rewrite:
    """A rewrite as the model wrote it (``reply``) and the new question read from it, or None with what to
    tell the model (``told``: why it is none, and what searching with it would find)."""

    query: str | None
    reply: str
    told: tuple[str, str] = ("", "")

    @property
    def why(self) -> str:
        return self.told[0]


async def rewrite_query(llm: LLM, query: str, reply: str, evidence: str, failure: str, reason: str, *,
                        again: Rewrite | None = None) -> Rewrite:
    """Eq. 6: q^(i+1) = Rewrite(q^(i), a^(i), E^(i), type^(i)), the evidence E included; ``again``: the
    first rewrite was no new question, and the model is shown its reply and told why."""
    prompt = REWRITE[failure].format(question=query, answer=reply, reason=reason, evidence=evidence)
    messages: list[Message] = [{"role": "user", "content": prompt}]
    if again is not None:
        why, finds = again.told
        messages += [{"role": "assistant", "content": again.reply},
                     {"role": "user", "content": REWRITE_AGAIN.format(why=why, finds=finds)}]
    step = f"a2rag.rewrite.{failure}" + (".again" if again is not None else "")
    rewritten = (await llm.text(messages, step=step, kind="query")).strip()
    # An echo of our instructions is no question, whichever prompt it repeats (Gemma 3 270M returned the
    # answer prompt's first line to a rewrite).
    if any(echoes_instructions(rewritten, template) for template in (REWRITE[failure], ANSWER, READER_INSTRUCTION,
                                                                    PREAMBLE, REWRITE_AGAIN)):
        return Rewrite(None, rewritten, ECHOED_INSTRUCTIONS)
    parsed = parse_rewrite(rewritten)
    if not parsed or _same(parsed, query):
        return Rewrite(None, rewritten or query, SAME_QUESTION)
    if asks_about_instructions(parsed, query):
        return Rewrite(None, rewritten, ASKS_ABOUT_INSTRUCTIONS)
    return Rewrite(parsed, rewritten)


def reached_names(query: str, reply: str, answer: str | None) -> list[str]:
    """The names (not dates or numbers) a draft's reasoning line gives that neither the query nor the
    draft's answer says: where the draft stopped on the way, the entity it found ("Maximum Overdrive was
    shot in Leland") is where the next hop starts."""
    _, reasoning = answer_part(reply)
    said = f"{query} {answer or ''}".casefold()
    names: list[str] = []
    for line in (reasoning or "").splitlines():
        for name in entities_in(_REASONING_LABEL.sub("", line)):
            if not is_value(name) and name.casefold() not in said and name not in names:
                names.append(name)
    return names


def from_draft(query: str, reply: str, answer: str | None) -> str | None:
    """The query naming the entities the draft's reasoning reached that neither the query nor the rejected
    answer names (``rewrite_from_draft``, ``reached_names``): where the model could not rewrite, that
    entity is where the next hop starts. None when the reasoning names no new entity."""
    names = reached_names(query, reply, answer)
    return f"{query.rstrip()} ({'; '.join(names)})" if names else None


def names_new(rewritten: str, query: str) -> bool:
    """Whether a rewrite names an entity (not a date or number) that the query does not: a new seed."""
    said = query.casefold()
    return any(name.casefold() not in said for name in entities_in(rewritten) if not is_value(name))


def with_draft_names(query: str, rewritten: str | None, reply: str, answer: str | None) -> str | None:
    """The next query where the model's rewrite would search where the query did (``rewrite_from_draft``):
    when it is no new question, or names no entity the query does not (its seeds, and so its local
    neighbourhood, are the query's: §III-D's "retrieving the same neighborhood"), the rewrite (else the
    query) naming the entities the draft's reasoning reached (``from_draft``). None when the model's
    rewrite names a new entity, or the reasoning reached none."""
    if rewritten is not None and names_new(rewritten, query):
        return None
    return from_draft(rewritten or query, reply, answer)


_INSTRUCTION_WORDS = stems(" ".join([*REWRITE.values(), REWRITE_AGAIN]))


def asks_about_instructions(rewritten: str, query: str) -> bool:
    """Whether at least half of a rewrite's content words are our rewrite instructions' and not the
    question's. Qwen2.5-1.5B, told its rewrite repeated the question, wrote "What entity and relation must
    be found in the sources to answer this question?", which searched for nothing the question needs; a
    rewrite that resolves a hop ("Where is Acme headquartered?" for "Where is the company that Alice
    Stone founded based?") says words of neither and stands."""
    words = stems(rewritten)
    ours = words & (_INSTRUCTION_WORDS - stems(query))
    return bool(words) and 2 * len(ours) >= len(words)


def _same(a: str, b: str) -> bool:
    return " ".join(a.casefold().split()).rstrip("?. ") == " ".join(b.casefold().split()).rstrip("?. ")


def parse_rewrite(reply: str) -> str:
    """The rewritten question in a reply: the first line that is not a bare preamble, without a
    "Rewritten question:" label or quotes."""
    for line in reply.splitlines():
        text = _PREAMBLE.sub("", line.strip()).strip().strip('"*').strip()
        if text:
            return text
    return ""
