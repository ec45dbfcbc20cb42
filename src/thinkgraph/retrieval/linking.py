"""Question entity linking without an LLM (HippoRAG 1 seeds on the question's entities): an
Aho-Corasick scan (`pyahocorasick`) finds every indexed entity name written in the question, and
`rapidfuzz` matches the question's name-like phrases that no exact name covers (spelling variants,
"Wesson" for "Barry Wesson's")."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import ahocorasick
from bm25s.stopwords import STOPWORDS_EN_PLUS
from rapidfuzz import fuzz, process

from thinkgraph.names import entities_in

_POSSESSIVE = re.compile(r"(?<=\w)['’]s\b")
_NON_WORD = re.compile(r"[^\w]+")
# Names made only of these carry no identity ("the", "he"): never linked (NLTK's English list).
_FUNCTION_WORDS = frozenset(STOPWORDS_EN_PLUS)


def _words(text: str) -> list[str]:
    """Words in their written case: NFKC, possessives dropped, punctuation as spaces."""
    return _NON_WORD.sub(" ", _POSSESSIVE.sub("", unicodedata.normalize("NFKC", text))).split()


def link_key(text: str) -> str:
    """The form names and questions are compared in: the words case-folded, single spaces."""
    return " ".join(w.casefold() for w in _words(text))


def _name_like(words: list[str]) -> list[bool]:
    """Which of the question's words may belong to a name: capitalised or numeric and not a function
    word. A question written without capitals gives no such signal, so every word may."""
    cased = any(w[:1].isupper() for w in words)
    return [(not cased or w[:1].isupper() or w[:1].isdigit()) and w.casefold() not in _FUNCTION_WORDS
            for w in words]


@dataclass(frozen=True, slots=True)
class Link:
    entity_id: str
    mention: str  # the question's words that named it
    confidence: float  # 1 for an exact name, the fuzzy ratio / 100 otherwise


class EntityLinker:
    """Finds the index's entities named in a question."""

    def __init__(self, ids: Sequence[str], names: Sequence[str], *, min_chars: int = 3,
                 fuzzy_cutoff: float = 90.0) -> None:
        by_key: dict[str, list[str]] = {}
        for eid, name in zip(ids, names, strict=True):
            key = link_key(name)
            if len(key) >= min_chars and not set(key.split()) <= _FUNCTION_WORDS:
                by_key.setdefault(key, []).append(eid)
        self._load(by_key, fuzzy_cutoff)

    @classmethod
    def from_keys(cls, by_key: dict[str, list[str]], *, fuzzy_cutoff: float = 90.0) -> EntityLinker:
        """A linker over the ``by_key`` map of another one (kept in the view cache)."""
        linker = cls.__new__(cls)
        linker._load(by_key, fuzzy_cutoff)
        return linker

    @property
    def by_key(self) -> dict[str, list[str]]:
        """Link key -> ids of the entities with that name."""
        return self._by_key

    def _load(self, by_key: dict[str, list[str]], fuzzy_cutoff: float) -> None:
        self.fuzzy_cutoff = fuzzy_cutoff
        self._by_key = by_key
        self._keys = list(self._by_key)
        self._automaton = ahocorasick.Automaton()
        for key in self._keys:
            self._automaton.add_word(f" {key} ", key)
        if self._keys:
            self._automaton.make_automaton()

    def __len__(self) -> int:
        return len(self._keys)

    def link(self, question: str) -> list[Link]:
        """Exact names that a name-like word of the question starts or continues (HippoRAG 1 links
        the question's named entities, not type words such as "country" or "author"; where names
        overlap the longest wins), then fuzzy matches of name-like phrases no exact name covers."""
        if not self._keys:
            return []
        words = _words(question)
        spans = self._exact_spans(words)
        links = [Link(eid, key, 1.0) for key in spans for eid in self._by_key[key]]
        covered = " ".join(spans)
        for phrase in entities_in(question):
            key = link_key(phrase)
            if len(key) < 3 or key in covered or key in self._by_key:
                continue
            for match, score, _ in process.extract(key, self._keys, scorer=fuzz.ratio, limit=3,
                                                   score_cutoff=self.fuzzy_cutoff):
                links.extend(Link(eid, phrase, score / 100.0) for eid in self._by_key[match])
        best: dict[str, Link] = {}
        for link in links:
            if link.entity_id not in best or link.confidence > best[link.entity_id].confidence:
                best[link.entity_id] = link
        return list(best.values())

    def _exact_spans(self, words: list[str]) -> list[str]:
        """Non-overlapping names at word boundaries, longest first, each with a name-like word."""
        text = " " + " ".join(w.casefold() for w in words) + " "
        name_like = _name_like(words)
        found = []
        for end, key in self._automaton.iter(text):
            first = text[: end - len(key) - 1].count(" ")  # index of the span's first word
            last = first + key.count(" ") + 1
            if named := sum(name_like[first:last]):
                found.append((first, last, key, named))
        taken = [False] * len(words)
        kept: list[tuple[int, str]] = []
        # Longest first; among equally long, the more name-like ("World Series" over "the world").
        for first, last, key, _ in sorted(found, key=lambda t: (t[0] - t[1], -t[3], t[0])):
            if not any(taken[first:last]):
                taken[first:last] = [True] * (last - first)
                kept.append((first, key))
        return [key for _, key in sorted(kept)]


def strip_mentions(question: str, mentions: Iterable[str]) -> str:
    """The question without the given mentions (link keys or phrases, matched case-insensitively
    across punctuation, with a trailing possessive), spaces collapsed: what the question asks of
    the entities it names: "Who coached Lena Sorensen's rival?" without "lena sorensen" is "Who
    coached rival?"."""
    out = question
    for mention in sorted(set(mentions), key=len, reverse=True):  # longest first: a name inside a name
        words = _words(mention)
        if not words:
            continue
        pattern = r"(?<!\w)" + r"\W+".join(re.escape(w) for w in words) + r"(?:['’]s)?(?!\w)"
        out = re.sub(pattern, " ", out, flags=re.IGNORECASE)
    return " ".join(out.split())
