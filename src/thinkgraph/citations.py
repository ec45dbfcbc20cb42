"""Citations narrowed from a whole passage (a chunk of up to 1,024 tokens) to the sentence in it that
best matches the question and the answer, with that sentence's own character span, so that a reader
sees the line that supports the answer and its page (for a PDF chunk that spans pages)."""

from __future__ import annotations

import re

from thinkgraph.models import Answer, Citation

# A sentence ends at . ! or ?, at a blank line, or before a line that starts a heading or a list item;
# a single line break inside a sentence (hard-wrapped text) does not end it.
_LINE_BREAK_IN_SENTENCE = r"\n(?![ \t]*(?:\n|[-*+#>]|\d+[.)]\s))"
_SENTENCE = re.compile(rf"(?:[^.!?\n]|{_LINE_BREAK_IN_SENTENCE})+(?:[.!?]+[\"')\]]*|\n|$)")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STOPWORD_TEXT = """a an and are as at be been but by did do does for from had has have he her his how in
into is it its of on or she that the their them they this to was were what when where which who whom whose why
will with you your not no"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
ANSWER_WEIGHT = 2.0  # the answer's words say more about the supporting line than the question's
# A Markdown heading names the topic and repeats the question's words without saying anything about
# them: it wins only with more matching words than every sentence of the passage, not on a tie.
HEADING_PENALTY = 0.5


def _words(text: str) -> set[str]:
    return {w for w in (m.group().casefold() for m in _WORD.finditer(text)) if w not in STOPWORDS and len(w) > 1}


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence in ``text``, without surrounding whitespace."""
    spans = []
    for m in _SENTENCE.finditer(text):
        start, end = m.start(), m.end()
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if end > start:
            spans.append((start, end))
    return spans


def best_sentence(text: str, question: str, answer: str | None = None) -> tuple[int, int] | None:
    """The span of the sentence sharing most words with the question and the answer (answer words
    weigh double); None when no sentence shares any word."""
    asked, answered = _words(question), _words(answer or "")
    best: tuple[float, int, int] | None = None
    for start, end in sentence_spans(text):
        words = _words(text[start:end])
        score = len(words & asked) + ANSWER_WEIGHT * len(words & answered)
        if score > 0 and text.startswith("#", start):
            score -= HEADING_PENALTY
        if score > 0 and (best is None or score > best[0]):
            best = (score, start, end)
    return (best[1], best[2]) if best else None


def focus(citation: Citation, passage: str, question: str, answer: str | None) -> None:
    """Narrow ``citation`` (whose span is the whole ``passage``) to its best-matching sentence."""
    if citation.start is None:
        return
    found = best_sentence(passage, question, answer)
    if found is None:
        return
    start, end = found
    citation.quote = passage[start:end]
    citation.end = citation.start + end
    citation.start = citation.start + start


def focus_answer(answer: Answer, passages: dict[str, str]) -> None:
    """Every citation of ``answer`` narrowed; ``passages`` maps chunk ids to their text."""
    for citation in answer.citations:
        text = passages.get(citation.chunk_id)
        if text is not None and citation.end is not None and citation.start is not None \
                and citation.end - citation.start == len(text):
            focus(citation, text, answer.question, answer.text)
