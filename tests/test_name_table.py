"""The name table behind entity linking (retrieval/name_table.py) against independent references: a
dictionary for exact lookups and rapidfuzz over every key for fuzzy matches."""

from __future__ import annotations

import random
import string

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz, process

from thinkgraph.retrieval.linking import EntityLinker
from thinkgraph.retrieval.name_table import NameTable, trigrams


def _names(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    letters = string.ascii_lowercase + "éøß"
    words = ["".join(rng.choices(letters, k=rng.randint(2, 9))) for _ in range(count // 2 + 5)]
    return list(dict.fromkeys(" ".join(rng.choices(words, k=rng.randint(1, 3))) for _ in range(count)))


def _by_key(names: list[str]) -> dict[str, list[str]]:
    return {name: [f"ent:{i}", f"ent:{i}b"] if i % 7 == 0 else [f"ent:{i}"] for i, name in enumerate(names)}


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> tuple[NameTable, dict[str, list[str]]]:
    by_key = _by_key(_names(3000, seed=3))
    folder = tmp_path_factory.mktemp("names")
    NameTable.build(by_key).save(folder)
    return NameTable.load(folder), by_key  # as a new process reads it: memory-mapped


def test_exact_lookup_finds_every_key_and_nothing_else(table) -> None:  # noqa: ANN001
    names, by_key = table
    assert len(names) == len(by_key)
    for key, ids in by_key.items():
        slot = names.find(key)
        assert slot is not None and names.key(slot) == key and names.entity_ids(slot) == ids
    assert names.find("no such name here") is None and names.find("") is None


@pytest.mark.parametrize("cutoff", [80.0, 90.0])
def test_fuzzy_matches_are_those_of_a_scan_of_every_key(table, cutoff: float) -> None:  # noqa: ANN001
    names, by_key = table
    keys = list(by_key)
    rng = random.Random(11)
    queries = [k[:-1] + "x" for k in rng.sample(keys, 60)] + [k + k[-1] for k in rng.sample(keys, 40)]
    queries += ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 14))) for _ in range(60)]
    for query in queries:
        expected = [(m, s) for m, s, _ in process.extract(query, keys, scorer=fuzz.ratio, limit=3, score_cutoff=cutoff)]
        assert [(names.key(slot), score) for slot, score in names.fuzzy(query, limit=3, cutoff=cutoff)] == expected


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="abcdeé ", min_size=1, max_size=10), min_size=1, max_size=30, unique=True),
       st.text(alphabet="abcdeé ", min_size=1, max_size=10))
def test_fuzzy_never_misses_a_match_on_any_keys(keys: list[str], query: str) -> None:
    names = NameTable.build({k: [f"e{i}"] for i, k in enumerate(keys)})
    expected = [(m, s) for m, s, _ in process.extract(query, keys, scorer=fuzz.ratio, limit=3, score_cutoff=70)]
    assert [(names.key(slot), score) for slot, score in names.fuzzy(query, limit=3, cutoff=70)] == expected


def test_trigrams_are_padded_and_exact() -> None:
    grams = trigrams("ab")
    assert grams.shape == (2,) and len(set(trigrams("abcabc").tolist())) == 5  # " ab", "abc", "bca", "cab", "bc "
    assert trigrams("").shape == (0,) or trigrams("").shape == (0,)
    assert not np.intersect1d(trigrams("xyz"), trigrams("abc")).size


def test_linker_finds_every_name_written_in_a_question() -> None:
    """Every run of the question's words that is a name (a brute-force reference), longest first."""
    ids = [f"e{i}" for i in range(6)]
    names = ["Ada Lovelace", "Ada", "London", "Royal Society of London", "Society", "the"]
    linker = EntityLinker(ids, names)
    links = {link.entity_id for link in linker.link("Did Ada Lovelace address the Royal Society of London?")}
    assert links == {"e0", "e3"}  # "Ada", "London" and "Society" lie inside longer names; "the" is no name
    assert {link.entity_id for link in linker.link("Ada went to London")} == {"e1", "e2"}
