"""Question entity linking without an LLM (HippoRAG 1 seeds on the question's entities): an
Aho-Corasick scan (`pyahocorasick`) finds every indexed entity name written in the question, and
`rapidfuzz` matches the question's name-like phrases that no exact name covers (spelling variants,
"Wesson" for "Barry Wesson's")."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import ahocorasick
from bm25s.stopwords import STOPWORDS_EN_PLUS
from rapidfuzz import fuzz, process

from thinkgraph.index.extract_nolm import entities_in

_POSSESSIVE = re.compile(r"(?<=\w)['’]s\b")
_NON_WORD = re.compile(r"[^\w]+")
# Names made only of these carry no identity ("the", "he"): never linked (NLTK's English list).
_FUNCTION_WORDS = frozenset(STOPWORDS_EN_PLUS)


def link_key(text: str) -> str:
    """The form names and questions are compared in: NFKC, case-folded, possessives dropped,
    punctuation as spaces, single spaces."""
    text = _POSSESSIVE.sub("", unicodedata.normalize("NFKC", text))
    return " ".join(_NON_WORD.sub(" ", text.casefold()).split())


@dataclass(frozen=True, slots=True)
class Link:
    entity_id: str
    mention: str  # the question's words that named it
    confidence: float  # 1 for an exact name, the fuzzy ratio / 100 otherwise


class EntityLinker:
    """Finds the index's entities named in a question."""

    def __init__(self, ids: Sequence[str], names: Sequence[str], *, min_chars: int = 3,
                 fuzzy_cutoff: float = 90.0) -> None:
        self.fuzzy_cutoff = fuzzy_cutoff
        self._by_key: dict[str, list[str]] = {}
        for eid, name in zip(ids, names, strict=True):
            key = link_key(name)
            if len(key) >= min_chars and not set(key.split()) <= _FUNCTION_WORDS:
                self._by_key.setdefault(key, []).append(eid)
        self._keys = list(self._by_key)
        self._automaton = ahocorasick.Automaton()
        for key in self._keys:
            self._automaton.add_word(f" {key} ", key)
        if self._keys:
            self._automaton.make_automaton()

    def __len__(self) -> int:
        return len(self._keys)

    def link(self, question: str) -> list[Link]:
        """Exact names first (the longest match wins where names overlap), then fuzzy matches of the
        question's name-like phrases that no exact match covers."""
        if not self._keys:
            return []
        text = f" {link_key(question)} "
        spans = self._exact_spans(text)
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

    def _exact_spans(self, text: str) -> list[str]:
        """Names found at word boundaries, dropping those inside a longer found name."""
        found = [(end - len(key) - 1, end, key) for end, key in self._automaton.iter(text)]
        found.sort(key=lambda t: (t[0], -(t[1] - t[0])))
        kept: list[tuple[int, int, str]] = []
        for start, end, key in found:
            if any(s <= start and end <= e and (s, e) != (start, end) for s, e, _ in kept):
                continue
            kept = [k for k in kept if not (start <= k[0] and k[1] <= end and (k[0], k[1]) != (start, end))]
            kept.append((start, end, key))
        return list(dict.fromkeys(key for _, _, key in kept))
