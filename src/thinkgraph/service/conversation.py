"""A chat conversation as one standalone question: the dialogue is condensed by the LLM into a
question that can be answered without the earlier turns (a follow-up such as "and when did he die?"
names who it is about). Without an LLM, the earlier user turns are kept before the last one so that
retrieval still sees what the follow-up refers to."""

from __future__ import annotations

import logging

from thinkgraph.errors import InputError, LLMError
from thinkgraph.llm.service import LLM
from thinkgraph.service.schemas import ChatMessage

log = logging.getLogger(__name__)
CONDENSE_STEP = "chat.condense"
MAX_TURNS = 12  # the latest turns are enough to resolve a follow-up
MAX_TURN_CHARS = 1500
CONDENSE_PROMPT = """Below is a conversation between a user and an assistant, then the user's latest message.
Rewrite the latest message as one standalone question that can be understood without the
conversation: replace pronouns and references with the names they point to, and keep the user's
wording otherwise. If it is already standalone, repeat it unchanged. Reply with the question only.

Conversation:
{history}

Latest message: {question}
Standalone question:"""


def text_of(message: ChatMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    return " ".join(str(part.get("text", "")) for part in message.content or [] if part.get("type") == "text")


def dialogue(messages: list[ChatMessage]) -> tuple[list[tuple[str, str]], str]:
    """The earlier (role, text) turns and the last user message's text."""
    turns = [(m.role, text_of(m).strip()) for m in messages if m.role in ("user", "assistant")]
    while turns and turns[-1][0] != "user":
        turns.pop()
    if not turns or not turns[-1][1]:
        raise InputError("the conversation has no user message with text")
    return turns[:-1][-MAX_TURNS:], turns[-1][1]


async def standalone_question(messages: list[ChatMessage], llm: LLM | None) -> str:
    history, question = dialogue(messages)
    if not history:
        return question
    if llm is None:
        earlier = [text for role, text in history if role == "user"][-2:]
        return " ".join([*earlier, question])
    lines = "\n".join(f"{role}: {text[:MAX_TURN_CHARS]}" for role, text in history)
    try:
        reply = await llm.text([{"role": "user", "content": CONDENSE_PROMPT.format(history=lines, question=question)}],
                               step=CONDENSE_STEP, max_tokens=200)
    except LLMError as exc:  # the method still answers the latest message as it stands
        log.warning("could not condense the conversation (%s); asking the latest message as it is", exc)
        return question
    condensed = reply.strip().splitlines()[0].strip().strip('"') if reply.strip() else ""
    return condensed or question
