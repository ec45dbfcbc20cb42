"""Short per-document summaries, kept as the document node's text (and so embedded with it)."""

from __future__ import annotations

import re

from thinkgraph.errors import StructuredOutputError
from thinkgraph.llm.echo import echoes_instructions
from thinkgraph.llm.service import LLM, Message
from thinkgraph.models import SourceDocument

DOC_SUMMARY_STEP = "index.document_summary"
MAX_SOURCE_TOKENS = 2000
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")

DOC_SUMMARY_PROMPT = """Summarise the document below in two or three sentences: what it is about,
the main entities it names and the kind of facts it holds. Use only the document.

Title: {title}
Document:
{text}

Summary:"""


def first_sentences(doc: SourceDocument, max_words: int) -> str:
    """The title and the opening sentences, cut at a sentence end near ``max_words`` words."""
    words: list[str] = []
    for sentence in _SENTENCE_END.split(" ".join(doc.text.split())):
        if words and len(words) + len(sentence.split()) > max_words:
            break
        words.extend(sentence.split())
    body = " ".join(words[: max_words * 2])
    return f"{doc.title}: {body}" if doc.title and not body.startswith(doc.title) else body


async def llm_summary(llm: LLM, doc: SourceDocument) -> str:
    text = llm.counter.truncate(doc.text, MAX_SOURCE_TOKENS)
    messages: list[Message] = [{"role": "user", "content": DOC_SUMMARY_PROMPT.format(title=doc.title, text=text)}]
    summary = (await llm.text(messages, step=DOC_SUMMARY_STEP, kind="summary",
                              usable=lambda reply: not echoes_instructions(reply, DOC_SUMMARY_PROMPT))).strip()
    if echoes_instructions(summary, DOC_SUMMARY_PROMPT):
        raise StructuredOutputError("the document summary repeats the prompt's instructions")
    return summary
