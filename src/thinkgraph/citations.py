"""Citations narrowed from a whole passage (a chunk of up to 1,024 tokens) to the sentences in it that
answer the question, with their own character span, so that a reader sees the lines that support the
answer and their page (for a PDF chunk that spans pages).

Sentences come from a maintained segmenter that knows abbreviations, initials, decimals and
quotations (``sentencex``: "President James K. Polk" stays inside its sentence), within blocks the
text's layout separates (blank lines, headings, list items). The sentence shown is the one that
answers rather than restates: words of the question count by how rare they are among the passage's
sentences (the passage's own topic is in most of them), the answer's words weigh double, and a
sentence that adds what the question asks for (a name for "who", a date for "when", ...) that the
question does not hold scores more. Each part of a multi-part question ("Who made it, and who trained
her?") gets its sentence, and the span covers them when they are close. A chosen sentence that names
its subject only by a pronoun brings the sentence before it that names whom it stands for."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

from sentencex import segment

from thinkgraph.models import Answer, Citation

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STOPWORD_TEXT = """a an and are as at be been but by did do does for from had has have he her his how in
into is it its of on or she that the their them they this to was were what when where which who whom whose why
will with you your not no"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
ANSWER_WEIGHT = 2.0  # the answer's words say more about the supporting line than the question's
# A Markdown heading names the topic and repeats the question's words without saying anything about
# them: it wins only with more matching words than every sentence of the passage, not on a tie.
HEADING_PENALTY = 0.5
# The question's names weigh half its other words: every passage retrieved for a question speaks of the
# things it names, and a sentence that only restates them ("X is an observatory on ...") does not say
# what is asked of them ("... was founded by", ours).
NAME_WORD_WEIGHT = 0.5
ADDS_WEIGHT = 0.75  # per thing of the asked kind the sentence adds (ours), at most ADDS_MAX of them
ADDS_MAX = 2
MAX_SPAN_SENTENCES = 3  # the parts of a question or a pronoun's referent: at most this many sentences
# A later part of a question speaks of what the first part found ("... and who trained her?"): the
# sentences next to the first part's sentence score this much more for it (ours).
NEAR_WEIGHT = 1.0
_NEW_BLOCK = re.compile(r"[ \t]*(?:#|[-*+>]\s|\d+[.)]\s)")  # a line that starts a heading, item or quote
# A sentence that speaks of someone by pronoun ("She was trained by ...", "... her workshop produced"),
# or that starts with one ("It was founded ..."), needs the sentence naming whom it stands for.
_PRONOUN = re.compile(r"^(?:it|its|this|these|those)\b|\b(?:he|she|his|her|him|they|their|them)\b", re.IGNORECASE)
_NAME = re.compile(r"\b[A-Z][\w'-]*(?:\s+(?:of|the|de|von|van)?\s*[A-Z][\w'-]*)+")
_NUMBER = re.compile(r"\b\d[\d,.]*\b")
_PARTS = re.compile(r",?\s+and\s+(?=(?:who|whom|whose|what|when|where|which|how|why)\b)|[;?]\s+(?=\w)",
                    re.IGNORECASE)


def content_words(text: str) -> set[str]:
    """The case-folded words of a text without stopwords and single letters."""
    return {w for w in (m.group().casefold() for m in _WORD.finditer(text)) if w not in STOPWORDS and len(w) > 1}


def _blocks(text: str) -> Iterator[tuple[int, int]]:
    """Spans of the text's layout blocks: a blank line ends one, a heading, list item or quote line
    starts one, and a heading is a block of its own."""
    start = pos = 0
    for line in text.splitlines(keepends=True):
        if not line.strip() or _NEW_BLOCK.match(line):
            if pos > start:
                yield start, pos
            start = pos if line.strip() else pos + len(line)
        pos += len(line)
        if line.lstrip().startswith("#"):  # a heading ends where its line ends
            yield start, pos
            start = pos
    if pos > start:
        yield start, pos


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence in ``text``, without surrounding whitespace."""
    spans: list[tuple[int, int]] = []
    for block_start, block_end in _blocks(text):
        block, at = text[block_start:block_end], 0
        for piece in segment("en", block):
            found = block.find(piece, at)
            start = found if found >= 0 else at
            end, at = start + len(piece), start + len(piece)
            while start < end and block[start].isspace():
                start += 1
            while end > start and block[end - 1].isspace():
                end -= 1
            if end > start:
                spans.append((block_start + start, block_start + end))
    return spans


def needs_antecedent(sentence: str) -> bool:
    """Whether a sentence speaks of someone by pronoun, or starts with one, and so needs the sentence
    before it that names whom it stands for (the rule ``best_span`` reaches back by)."""
    return bool(_PRONOUN.search(sentence))


def question_parts(question: str) -> list[str]:
    """The parts of a multi-part question ("Who made X, and who trained her?"), or the question."""
    parts = [p.strip(" ,?") for p in _PARTS.split(question) if p and p.strip(" ,?")]
    return parts or [question]


def _asked_kind(question: str) -> re.Pattern[str] | None:
    """What an answer to the question names: people and places by name, times and amounts by number."""
    head = question.strip().casefold()
    if head.startswith(("when", "what year", "which year", "in what year", "how many", "how much", "how old")):
        return _NUMBER
    if head.startswith(("who", "whom", "whose", "where", "which", "what")):
        return _NAME
    return None


def _adds(sentence: str, question: str) -> int:
    """How many things of the asked kind the sentence names that the question does not."""
    kind = _asked_kind(question)
    if kind is None:
        return 0
    asked = question.casefold()
    return sum(1 for m in kind.finditer(sentence) if m.group().casefold() not in asked)


def _name_words(question: str) -> set[str]:
    """The words of the names a question holds (capitalised after its first word)."""
    words = question.split()[1:]
    return content_words(" ".join(w for w in words if w[:1].isupper() or w[:1].isdigit()))


def _scores(text: str, spans: list[tuple[int, int]], question: str, answer: str | None) -> list[float]:
    words = [content_words(text[s:e]) for s, e in spans]
    frequency = Counter(w for ws in words for w in ws)
    asked, answered, names = content_words(question), content_words(answer or ""), _name_words(question)
    out = []
    for (start, end), ws in zip(spans, words, strict=True):
        # rare in the passage says more; the question's names say less than what it asks of them
        overlap = sum((NAME_WORD_WEIGHT if w in names else 1.0) / frequency[w] for w in ws & asked)
        score = overlap + ANSWER_WEIGHT * len(ws & answered)
        if overlap > 0:  # (what a sentence adds counts only beside what it shares with the question)
            score += ADDS_WEIGHT * min(_adds(text[start:end], question), ADDS_MAX)
        if score > 0 and text.startswith("#", start):
            score -= HEADING_PENALTY
        out.append(score)
    return out


def best_sentence(text: str, question: str, answer: str | None = None) -> tuple[int, int] | None:
    """The span of the sentence that best answers the question (None when none shares a word)."""
    spans = sentence_spans(text)
    scores = _scores(text, spans, question, answer)
    best = max(range(len(spans)), key=lambda i: (scores[i], -i), default=None)
    return spans[best] if best is not None and scores[best] > 0 else None


def best_span(text: str, question: str, answer: str | None = None) -> tuple[int, int] | None:
    """The best sentence for each part of the question, covered by one span when they lie within
    MAX_SPAN_SENTENCES, and reaching back to the sentence that names a leading pronoun's referent."""
    spans = sentence_spans(text)
    chosen: list[int] = []
    for part in question_parts(question):
        scores = _scores(text, spans, part, answer)
        if chosen:
            scores = [score + NEAR_WEIGHT * (score > 0) / max(1, min(abs(i - c) for c in chosen))
                      for i, score in enumerate(scores)]
        best = max(range(len(spans)), key=lambda i: (scores[i], -i), default=None)
        if best is not None and scores[best] > 0:
            chosen.append(best)
    if not chosen:
        return None
    first, last = min(chosen), max(chosen)
    if last - first >= MAX_SPAN_SENTENCES:  # far apart: the first part's sentence alone
        first = last = chosen[0]
    while first > 0 and last - first + 1 < MAX_SPAN_SENTENCES and _PRONOUN.search(text[slice(*spans[first])]) \
            and _same_block(text, spans[first - 1], spans[first]):
        first -= 1
    return spans[first][0], spans[last][1]


def _same_block(text: str, before: tuple[int, int], after: tuple[int, int]) -> bool:
    between = text[before[1]:after[0]]
    return "\n\n" not in between and not text.startswith("#", before[0])


def lead_sentence(text: str) -> tuple[int, int] | None:
    """The passage's first sentence that is not a heading: what it is about, when no sentence of it
    shares a word with the question (a passage the graph reached through its entities)."""
    return next(((s, e) for s, e in sentence_spans(text) if not text.startswith("#", s)), None)


def focus(citation: Citation, passage: str, question: str, answer: str | None) -> None:
    """Narrow ``citation`` (whose span is the whole ``passage``) to the sentences that answer."""
    if citation.start is None:
        return
    found = best_span(passage, question, answer) or lead_sentence(passage)
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


def excerpt(text: str, limit: int) -> str:
    """``text`` on one line and at most ``limit`` characters, cut between words with "…" where cut
    (a quote cut by characters showed "the optician Ilse B")."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:max(limit - 1, 0)]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip() + "…"


# Markdown's markup in a quote shown to a reader ("**Ilse Brandt**"): the citation keeps the source's
# characters (its quote is the text at its offsets), what is printed for it does not.
_IN_PARAGRAPH = r"(?:[^\n]|\n(?![ \t]*\n))"  # any character but a blank line's break (emphasis may span lines)
_STRONG = re.compile(rf"(?<![\w*])(\*\*|__)(?=\S)({_IN_PARAGRAPH}+?)(?<=\S)\1(?![\w*])")
_EMPHASIS = re.compile(rf"(?<![\w*])([*_])(?=[^\s*_])((?:(?![*_]){_IN_PARAGRAPH})+?)(?<=[^\s*_])\1(?![\w*])")
_CODE = re.compile(r"`+([^`\n]+?)`+")
_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\s]*(?:\s+\"[^\"\n]*\")?\)")
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE)
_QUOTE_MARK = re.compile(r"^[ \t]*>[ \t]?", re.MULTILINE)


def plain_text(text: str) -> str:
    """``text`` without Markdown's emphasis, code ticks, links (their text kept), heading and quote
    marks: what a reader of a quote should see. For display only: offsets refer to the source."""
    text = _QUOTE_MARK.sub("", _HEADING.sub(r"\1", text))
    text = _LINK.sub(r"\1", text)
    text = _CODE.sub(r"\1", text)
    text = _STRONG.sub(r"\2", text)
    return _EMPHASIS.sub(r"\2", text)


def display_quote(text: str, limit: int) -> str:
    """A citation's quote as a reader sees it: plain text on one line, at most ``limit`` characters."""
    return excerpt(plain_text(text), limit)
