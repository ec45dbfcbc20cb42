"""The index's entity names as arrays for linking: an exact lookup by hash and a trigram index for
fuzzy matches, both memory-mapped from the view cache.

The linker kept the names as a JSON dictionary and an Aho-Corasick automaton built in every new
process: at a million passages (517k names) 5 s of a cold `ask` and 280 MB of each serving worker, and
every fuzzy match scanned all names with rapidfuzz (120 ms a phrase). Here a name is found by the
64-bit hash of its key (verified against the key's text), and a fuzzy match scores only the names that
share enough character trigrams with the phrase to reach the cutoff (the q-gram lemma: strings within
edit distance k share at least max(len) - 3k trigrams, so no match above the cutoff is missed)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rapidfuzz import fuzz, process

from thinkgraph.retrieval.view_cache import read_array, write_arrays

_ARRAYS = ("hashes", "key_ptr", "key_blob", "lengths", "rank", "id_ptr", "ids", "gram_codes", "gram_ptr",
           "gram_keys")


def key_hash(key: str) -> int:
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "little")


def trigrams(key: str) -> np.ndarray:
    """The character trigrams of `` key `` (padded with a space each side), one uint64 code each."""
    codes = np.frombuffer(f" {key} ".encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    if codes.shape[0] < 3:
        return np.zeros(0, dtype=np.uint64)
    out: np.ndarray = (codes[:-2] << np.uint64(42)) | (codes[1:-1] << np.uint64(21)) | codes[2:]
    return out


@dataclass(frozen=True)
class NameTable:
    """Link keys in the order of their hashes (``hashes``), each with its text (``key_ptr`` into
    ``key_blob``), its rank in the order the keys were given (ties between fuzzy matches go to the
    earlier), and its entity ids (``id_ptr`` into ``ids``); ``gram_codes`` -> keys by ``gram_ptr`` into
    ``gram_keys``."""

    hashes: np.ndarray
    key_ptr: np.ndarray
    key_blob: np.ndarray
    lengths: np.ndarray  # characters of each key
    rank: np.ndarray
    id_ptr: np.ndarray
    ids: np.ndarray  # fixed-width UTF-8 bytes
    gram_codes: np.ndarray
    gram_ptr: np.ndarray
    gram_keys: np.ndarray

    @classmethod
    def build(cls, by_key: Mapping[str, Sequence[str]]) -> NameTable:
        keys = list(by_key)
        hashes = np.fromiter((key_hash(k) for k in keys), dtype=np.uint64, count=len(keys))
        order = np.argsort(hashes, kind="stable")
        sorted_keys = [keys[i] for i in order]
        encoded = [k.encode("utf-8") for k in sorted_keys]
        key_ptr = np.zeros(len(keys) + 1, dtype=np.int64)
        key_ptr[1:] = np.cumsum([len(b) for b in encoded])
        id_lists = [list(by_key[k]) for k in sorted_keys]
        id_ptr = np.zeros(len(keys) + 1, dtype=np.int64)
        id_ptr[1:] = np.cumsum([len(x) for x in id_lists])
        flat_ids = [i for x in id_lists for i in x]
        grams = [np.unique(trigrams(k)) for k in sorted_keys]
        owners = np.repeat(np.arange(len(keys), dtype=np.int32), [g.shape[0] for g in grams])
        all_grams = np.concatenate(grams) if grams else np.zeros(0, dtype=np.uint64)
        by_gram = np.lexsort((owners, all_grams))
        codes, starts = np.unique(all_grams[by_gram], return_index=True)
        gram_ptr = np.append(starts, all_grams.shape[0]).astype(np.int64)
        return cls(hashes[order], key_ptr, np.frombuffer(b"".join(encoded), dtype=np.uint8).copy(),
                   np.array([len(k) for k in sorted_keys], dtype=np.int32), order.astype(np.int32), id_ptr,
                   np.array([i.encode("utf-8") for i in flat_ids], dtype=bytes) if flat_ids else np.zeros(0, "S1"),
                   codes.astype(np.uint64), gram_ptr, owners[by_gram])

    def __len__(self) -> int:
        return int(self.hashes.shape[0])

    def key(self, slot: int) -> str:
        return bytes(self.key_blob[self.key_ptr[slot]:self.key_ptr[slot + 1]]).decode("utf-8")

    def entity_ids(self, slot: int) -> list[str]:
        return [bytes(i).decode("utf-8") for i in self.ids[self.id_ptr[slot]:self.id_ptr[slot + 1]]]

    def find(self, key: str) -> int | None:
        """The slot of ``key``, or None."""
        wanted = np.uint64(key_hash(key))
        slot = int(np.searchsorted(self.hashes, wanted))
        while slot < len(self) and self.hashes[slot] == wanted:  # (a hash shared by two keys)
            if self.key(slot) == key:
                return slot
            slot += 1
        return None

    def fuzzy(self, key: str, *, limit: int, cutoff: float) -> list[tuple[int, float]]:
        """Up to ``limit`` (slot, fuzz.ratio) of the keys scoring at least ``cutoff`` against ``key``,
        best first, ties in the order the keys were given: what rapidfuzz over every key finds."""
        candidates = self._fuzzy_candidates(key, cutoff)
        if not candidates.shape[0]:
            return []
        candidates = candidates[np.argsort(self.rank[candidates], kind="stable")]
        texts = [self.key(int(s)) for s in candidates]
        found = process.extract(key, texts, scorer=fuzz.ratio, limit=limit, score_cutoff=cutoff)
        return [(int(candidates[i]), float(score)) for _, score, i in found]

    def _fuzzy_candidates(self, key: str, cutoff: float) -> np.ndarray:
        """Slots that may reach ``cutoff``: fuzz.ratio >= c means an Indel distance d <= (1 - c)(n + m)
        for lengths n and m, so |n - m| <= d, and a Levenshtein distance k <= d, so (q-gram lemma) the
        padded strings share at least max(n, m) - 3k trigrams; a trigram repeated in ``key`` is
        counted once here, so the bound drops by the repeats."""
        n = len(key)
        wanted = np.unique(trigrams(key))
        at = np.searchsorted(self.gram_codes, wanted)
        inside = at < self.gram_codes.shape[0]
        at = at[inside][self.gram_codes[at[inside]] == wanted[inside]]
        postings = [self.gram_keys[self.gram_ptr[g]:self.gram_ptr[g + 1]] for g in at]
        shared = np.bincount(np.concatenate(postings), minlength=len(self)) if postings else \
            np.zeros(len(self), dtype=np.int64)
        m = self.lengths.astype(np.float64)
        allowed = np.floor((100.0 - cutoff) * (n + m) / 100.0 + 1e-9)  # (1 - 0.8 is 0.19999...)
        bound = np.maximum(n, m) - 3.0 * allowed - (n - wanted.shape[0])
        return np.flatnonzero((np.abs(m - n) <= allowed) & (shared >= bound))

    def save(self, folder: Path) -> None:
        write_arrays(folder, **{name: getattr(self, name) for name in _ARRAYS})

    @classmethod
    def load(cls, folder: Path) -> NameTable:
        table = cls(*(read_array(folder, name) for name in _ARRAYS))
        if not (table.key_ptr.shape[0] == table.id_ptr.shape[0] == len(table) + 1
                and table.gram_ptr[-1] == table.gram_keys.shape[0]):
            raise ValueError("name table arrays of different lengths")
        return table
