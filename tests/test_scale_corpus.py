"""The scale corpus generator (benchmarks/scale_corpus.py) at CI sizes: exact size, deterministic from
its seed, distinct names, and questions whose gold passages state the two facts they chain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support import load_benchmark
from thinkgraph.index.loaders import load_paths
from thinkgraph.models import SourceDocument

scale_corpus = load_benchmark("scale_corpus")
ScaleCorpus = scale_corpus.ScaleCorpus


@pytest.mark.parametrize("n", [40, 57, 601, 4001])
def test_the_corpus_has_exactly_the_passages_asked_for_with_ids_in_order(n: int) -> None:
    passages = list(ScaleCorpus(n, seed=1).passages())
    assert len(passages) == n
    assert [p["id"] for p in passages] == [f"sc{i:07d}" for i in range(n)]
    assert all(p["text"].strip() and p["title"] for p in passages)


def test_the_same_seed_gives_the_same_corpus_and_another_seed_another() -> None:
    first = list(ScaleCorpus(500, seed=7).passages())
    assert first == list(ScaleCorpus(500, seed=7).passages())
    assert first != list(ScaleCorpus(500, seed=8).passages())
    assert ScaleCorpus(500, seed=7).questions(20) == ScaleCorpus(500, seed=7).questions(20)


def test_every_entity_has_a_name_of_its_own() -> None:
    corpus = ScaleCorpus(20_000, seed=0)
    s = corpus.sizes
    names = [corpus.person(i) for i in range(s.people)] + [corpus.city(i) for i in range(s.cities)]
    names += [corpus.org(i) for i in range(s.orgs)] + [corpus.country(i) for i in range(s.countries)]
    names += [corpus.org(i, alias=True) for i in range(s.orgs) if corpus.org(i).startswith("University of ")]
    assert len({n.casefold() for n in names}) == len(names)


def test_each_question_chains_two_facts_stated_in_its_two_gold_passages() -> None:
    corpus = ScaleCorpus(3000, seed=2)
    text = {p["id"]: p["text"] for p in corpus.passages()}
    questions = corpus.questions(60)
    assert len({q["id"] for q in questions}) == 60
    kinds = {q["question"].split(" of ")[0] if " of " in q["question"] else " ".join(q["question"].split()[:4])
             for q in questions}
    assert len(kinds) == 5, kinds  # the five templates take turns
    for q in questions:
        first, second = q["supporting_ids"]
        assert first != second and first in text and second in text
        assert q["answer"] in text[second]  # the second hop states the answer
        # the bridge links the hops (a university may be named "X University" in the first)
        key = max(q["bridge"].replace("University of ", "").split(), key=len)
        assert key in text[first] and key in text[second], q


def test_the_written_shards_load_as_documents(tmp_path: Path) -> None:
    corpus = ScaleCorpus(300, seed=0)
    shards = scale_corpus.write_corpus(corpus, tmp_path, questions=10)
    loaded = [d for d in load_paths(shards) if isinstance(d, SourceDocument)]
    assert [d.id for d in loaded] == [p["id"] for p in corpus.passages()]
    lines = (tmp_path / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 10 and set(json.loads(lines[0])) >= {"question", "answer", "supporting_ids"}

