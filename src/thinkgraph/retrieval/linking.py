"""Question entity linking without an LLM (HippoRAG 1 seeds on the question's entities): every run of
the question's words is looked up among the indexed entity names (retrieval/name_table.py), and
`rapidfuzz` matches the question's name-like phrases that no exact name covers (spelling variants,
"Wesson" for "Barry Wesson's") among the names that share enough trigrams with them."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from bm25s.stopwords import STOPWORDS_EN_PLUS

from thinkgraph.names import entities_in
from thinkgraph.retrieval.name_table import NameTable

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
        self._load(NameTable.build(by_key), fuzzy_cutoff)

    @classmethod
    def from_table(cls, table: NameTable, *, fuzzy_cutoff: float = 90.0) -> EntityLinker:
        """A linker over the names of another one (kept in the view cache)."""
        linker = cls.__new__(cls)
        linker._load(table, fuzzy_cutoff)
        return linker

    def _load(self, table: NameTable, fuzzy_cutoff: float) -> None:
        self.table = table
        self.fuzzy_cutoff = fuzzy_cutoff
        spaces = np.add.reduceat((table.key_blob == ord(" ")).astype(np.int64), table.key_ptr[:-1]) \
            if len(table) and table.key_blob.shape[0] else np.zeros(0, dtype=np.int64)
        self._max_words = int(spaces.max()) + 1 if len(table) else 0

    def __len__(self) -> int:
        return len(self.table)

    def link(self, question: str) -> list[Link]:
        """Exact names that a name-like word of the question starts or continues (HippoRAG 1 links
        the question's named entities, not type words such as "country" or "author"; where names
        overlap the longest wins), then fuzzy matches of name-like phrases no exact name covers."""
        if not len(self.table):
            return []
        words = _words(question)
        spans = self._exact_spans(words)
        links = [Link(eid, key, 1.0) for key, slot in spans for eid in self.table.entity_ids(slot)]
        covered = " ".join(key for key, _ in spans)
        for phrase in entities_in(question):
            key = link_key(phrase)
            if len(key) < 3 or key in covered or self.table.find(key) is not None:
                continue
            for slot, score in self.table.fuzzy(key, limit=3, cutoff=self.fuzzy_cutoff):
                links.extend(Link(eid, phrase, score / 100.0) for eid in self.table.entity_ids(slot))
        best: dict[str, Link] = {}
        for link in links:
            if link.entity_id not in best or link.confidence > best[link.entity_id].confidence:
                best[link.entity_id] = link
        return list(best.values())

    def _exact_spans(self, words: list[str]) -> list[tuple[str, int]]:
        """Non-overlapping names at word boundaries, longest first, each with a name-like word, as
        (key, slot of the name table) in the question's order."""
        folded = [w.casefold() for w in words]
        name_like = _name_like(words)
        found = []
        for first in range(len(words)):
            for last in range(first + 1, min(len(words), first + self._max_words) + 1):
                if not (named := sum(name_like[first:last])):
                    continue
                key = " ".join(folded[first:last])
                if (slot := self.table.find(key)) is not None:
                    found.append((first, last, key, named, slot))
        taken = [False] * len(words)
        kept: list[tuple[int, str, int]] = []
        # Longest first; among equally long, the more name-like ("World Series" over "the world").
        for first, last, key, _, slot in sorted(found, key=lambda t: (t[0] - t[1], -t[3], t[0])):
            if not any(taken[first:last]):
                taken[first:last] = [True] * (last - first)
                kept.append((first, key, slot))
        return [(key, slot) for _, key, slot in sorted(kept)]


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
