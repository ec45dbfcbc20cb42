"""A passage compacted to the sentences of it that bear on a question, for a reader whose cost is the
prompt tokens it reads (a small local model reads 25-90 of them a second): ``ppr``'s five whole
passages are ~950 tokens, most of them sentences about the passage's subject that the question does
not ask about.

A sentence bears on the question by the words it shares with it (Snowball stems), a word counting more
the rarer it is among the passage's sentences (the passage's own topic is in most of them), and, at
half weight, by the words it shares with what the reader is shown beside the passage: the entities the
index linked (the notes' entity paths, facts and relations) and the titles of the other passages, so
that the sentence of a first-hop passage naming the bridge to the second is kept. The ``keep`` best
are kept (among equals the earlier); a kept sentence that speaks of someone by pronoun brings the one
before it (the rule citations reach back by, ``citations.needs_antecedent``). Sentences come from the
segmenter citations use (``citations.sentence_spans``). Each kept stretch is the original text
verbatim and each left-out stretch one mark ("…"), so that the model sees the passage is cut and every
character shown maps back to the passage's own offsets (``Compacted.original_span``): citations stay
exact spans of the original."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

import Stemmer

from thinkgraph.citations import content_words, lead_sentence, needs_antecedent, sentence_spans

ELISION = "…"  # where sentences were left out (one token for most tokenizers)
RELATED_WEIGHT = 0.5  # a word shared with the linked entities or other titles, against one of the question
ANTECEDENT_REACH = 2  # sentences a pronoun may reach back for whom it stands for
# Fewer words than this left out: the passage is shown whole (the marks and a cut cost about what they save).
MIN_ELIDED_WORDS = 12


@dataclass(frozen=True, slots=True)
class Piece:
    """A stretch of the original passage shown verbatim: ``[start, end)`` of the original, at ``at``
    in the shown text."""

    start: int
    end: int
    at: int

    def holds(self, start: int, end: int) -> bool:
        return self.at <= start <= end <= self.at + self.end - self.start


@dataclass(frozen=True, slots=True)
class Compacted:
    """What a reader is shown of a passage: ``text``, made of the original's ``pieces`` with a mark
    between them (and before or after them where the passage goes on)."""

    text: str
    pieces: tuple[Piece, ...]

    @property
    def whole(self) -> bool:
        return len(self.pieces) == 1 and self.pieces[0].start == 0 and self.pieces[0].at == 0 \
            and self.pieces[0].end == len(self.text)

    @property
    def kept(self) -> list[tuple[int, int]]:
        """The spans of the original passage shown."""
        return [(p.start, p.end) for p in self.pieces]

    def original_span(self, start: int, end: int) -> tuple[int, int] | None:
        """The span of the original passage that ``[start, end)`` of the shown text is; None when it
        reaches over a mark (text across a cut is not a quote of the original)."""
        piece = next((p for p in self.pieces if p.holds(start, end)), None)
        return None if piece is None else (piece.start + start - piece.at, piece.start + end - piece.at)

    def locate(self, quote: str) -> tuple[int, int] | None:
        """The span of the original passage of a quote from the shown text (its first occurrence)."""
        at = self.text.find(quote) if quote else -1
        return None if at < 0 else self.original_span(at, at + len(quote))


@cache
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def stems(text: str) -> set[str]:
    """The Snowball stems (BM25's, retrieval/lexical.py) of the text's content words: "directed" meets
    "directs", "films" meets "film"."""
    return set(_stemmer().stemWords(sorted(content_words(text))))


def whole(text: str) -> Compacted:
    return Compacted(text, (Piece(0, len(text), 0),))


def compact(text: str, question: str, keep: int, *, related: Iterable[str] = (), titled: bool = True) -> Compacted:
    """``text`` cut to its ``keep`` sentences that bear most on ``question`` (and on the ``related``
    texts at half weight), with the sentences their pronouns stand for; whole when ``keep`` is 0, when
    it has no more sentences than that, or when fewer than MIN_ELIDED_WORDS words would be left out.
    ``titled``: the reader is shown the passage's title. A titled passage's first sentence is not kept
    for its own sake: the title names the subject ("[2] Acme Corp: ..."), and the first sentence is kept
    when it is among the ``keep`` (it bears on the question, or fewer sentences do) or a kept pronoun
    reaches back to it. An untitled passage keeps its
    first sentence, which in most prose says what the passage is about, so that the kept sentences
    have a subject."""
    spans = sentence_spans(text)
    if keep <= 0 or len(spans) <= keep:
        return whole(text)
    chosen = bearing(text, spans, question, keep, related)
    chosen |= antecedents(text, spans, chosen)
    lead = lead_sentence(text)  # (the first that is not a heading)
    if not titled and lead is not None:
        chosen.add(spans.index(lead))
    left_out = sum(len(text[s:e].split()) for i, (s, e) in enumerate(spans) if i not in chosen)
    if left_out < MIN_ELIDED_WORDS:
        return whole(text)
    return render(text, spans, sorted(chosen))


def compact_passages(question: str, passages: Sequence[tuple[str, str]], keep: int,
                     related: Sequence[str] = ()) -> list[Compacted]:
    """Each of the ``(title, text)`` passages a reader is shown together, compacted: a sentence bears on
    the question beside the ``related`` texts (the notes) and the other passages' titles, so that a
    first hop's sentence naming the second hop's subject is kept. (A second reading that also weighed
    the names the other passages kept found the answer in as many prompts of 40 MuSiQue dev questions,
    at every ``keep``: left out.)"""
    return [compact(text, question, keep, titled=bool(title),
                    related=[*related, *(t for j, (t, _) in enumerate(passages) if j != i and t)])
            for i, (title, text) in enumerate(passages)]


def bearing(text: str, spans: list[tuple[int, int]], question: str, keep: int,
            related: Iterable[str] = ()) -> set[int]:
    """The indexes of the ``keep`` sentences that bear most on the question; among equals the earlier,
    so that a passage none of whose sentences shares a word (one the graph reached through its
    entities) shows its first ones, which say what it is about."""
    words = [stems(text[s:e]) for s, e in spans]
    frequency = Counter(w for ws in words for w in ws)
    asked = stems(question)
    near = set().union(*(stems(r) for r in related)) - asked
    scores = [sum(1.0 / frequency[w] for w in ws & asked) + RELATED_WEIGHT * sum(1.0 / frequency[w] for w in ws & near)
              for ws in words]
    return set(sorted(range(len(spans)), key=lambda i: (-scores[i], i))[:keep])


def antecedents(text: str, spans: list[tuple[int, int]], chosen: set[int]) -> set[int]:
    """The sentences before chosen ones that speak by pronoun, up to ANTECEDENT_REACH back and within
    their block (a blank line starts another subject)."""
    added: set[int] = set()
    for i in chosen:
        j = i
        while j > 0 and i - j < ANTECEDENT_REACH and needs_antecedent(text[spans[j][0]:spans[j][1]]) \
                and "\n\n" not in text[spans[j - 1][1]:spans[j][0]]:
            j -= 1
            added.add(j)
    return added


def render(text: str, spans: list[tuple[int, int]], chosen: list[int]) -> Compacted:
    """The chosen sentences (sorted indexes), each run of neighbours one verbatim stretch of the
    original (the whitespace between its sentences kept), a mark where sentences were left out."""
    runs: list[list[int]] = []
    for i in chosen:
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    parts = [f"{ELISION} "] if runs[0][0] > 0 else []
    at = len(parts[0]) if parts else 0
    pieces: list[Piece] = []
    for first, last in runs:
        if pieces:
            parts.append(f" {ELISION} ")
            at += len(parts[-1])
        start, end = spans[first][0], spans[last][1]
        pieces.append(Piece(start, end, at))
        parts.append(text[start:end])
        at += end - start
    if runs[-1][1] < len(spans) - 1:
        parts.append(f" {ELISION}")
    return Compacted("".join(parts), tuple(pieces))
