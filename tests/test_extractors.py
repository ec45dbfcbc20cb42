"""The three extractors and the records they produce."""

from __future__ import annotations

import json

import pytest

from support import FIXTURES
from thinkgraph.config import LLMSettings
from thinkgraph.errors import ConfigError, InputError, StructuredOutputError
from thinkgraph.ids import entity_id
from thinkgraph.index.extract_import import ImportExtractor, load_openie, load_triple_file
from thinkgraph.index.extract_llm import EXTRACTION_STEP, LLMTripletExtractor
from thinkgraph.index.extract_nolm import NoLMExtractor, SpacyExtractor
from thinkgraph.index.records import extraction_records
from thinkgraph.llm.service import LLM
from thinkgraph.models import Chunk, SourceDocument
from thinkgraph.names import entities_in
from thinkgraph.testing import ScriptedBackend

TEXT = "Marie Curie was born in Warsaw. She won the Nobel Prize in Physics in 1903."
DOC = SourceDocument("d1", "Curie", TEXT, "d1.txt")
CHUNK = Chunk("chunk:1", "d1", TEXT, 0, len(TEXT), 20, 0)

GOOD = json.dumps({
    "entities": [{"entity_name": "Marie Curie", "entity_type": "Person", "entity_description": "Physicist"},
                 {"entity_name": "Warsaw", "entity_type": "Place", "entity_description": "City"},
                 {"entity_name": "Nobel Prize in Physics", "entity_type": "Award"}],
    "relationships": [
        {"source_entity": "Marie Curie", "target_entity": "Warsaw", "relation": "was born in",
         "relationship_description": "birthplace"},
        {"source_entity": "Marie Curie", "target_entity": "Nobel Prize in Physics", "relation": "won"},
        {"source_entity": "Warsaw", "target_entity": "Nobel Prize in Physics", "relation": "unrelated"}]})


def _extractor(*replies: str, max_triplets: int = 2) -> tuple[LLMTripletExtractor, ScriptedBackend]:
    backend = ScriptedBackend.of(list(replies))
    return LLMTripletExtractor(LLM(backend, settings=LLMSettings(model="m")), max_triplets=max_triplets), backend


async def test_llm_extraction_typed_and_capped() -> None:
    extractor, backend = _extractor(GOOD, max_triplets=2)
    ext = await extractor.extract(DOC, CHUNK)
    assert [(t.subject, t.predicate, t.object) for t in ext.triples] == [
        ("Marie Curie", "was born in", "Warsaw"), ("Marie Curie", "won", "Nobel Prize in Physics")]
    assert ext.triples[0].subject_type == "Person" and ext.triples[0].object_type == "Place"
    prompt = backend.requests[0].messages[0]["content"]
    assert "at most 2 relationships" in prompt and TEXT in prompt and "Title: Curie" in prompt
    assert backend.requests[0].response_format["type"] == "json_schema"
    schema = backend.requests[0].response_format["json_schema"]["schema"]
    assert schema["properties"]["entities"]["maxItems"] == 200 and "1. List entities." in prompt  # indexing: all
    described = schema["$defs"]["ExtractedRelation"]["properties"]["relationship_description"]
    assert described["maxLength"] == 300  # "one short sentence"


async def test_tog3s_bounded_extraction_asks_the_grammar_to_end_the_reply_at_the_relationships_kept() -> None:
    # a small model listing entities ran every attempt to the completion cap; a server without a grammar may
    # still send more: read, and cut to the bound
    backend = ScriptedBackend.of([GOOD])
    extractor = LLMTripletExtractor(LLM(backend, settings=LLMSettings(model="m")), max_triplets=2, bounded=True)
    ext = await extractor.extract(DOC, CHUNK)
    assert len(ext.triples) == 2 and len(ext.entities) == 3
    schema = backend.requests[0].response_format["json_schema"]["schema"]
    assert schema["properties"]["relationships"]["maxItems"] == 2 and schema["properties"]["entities"]["maxItems"] == 4
    assert "the entities of those relationships (at most 4)" in backend.requests[0].messages[0]["content"]


async def test_llm_extraction_repairs_then_fails_cleanly() -> None:
    extractor, backend = _extractor("```json\n{\"entities\": [], \"relationships\": null,}\n```")
    ext = await extractor.extract(DOC, CHUNK)
    assert ext.triples == [] and len(backend.requests) == 1
    extractor, backend = _extractor("garbage", '{"relationships": [{"source_entity": ""}]}', "still garbage")
    with pytest.raises(StructuredOutputError, match=EXTRACTION_STEP):
        await extractor.extract(DOC, CHUNK)
    assert extractor.llm.meter.parse_failures == 1


async def test_records_from_llm_extraction() -> None:
    extractor, _ = _extractor(GOOD)
    records = extraction_records(CHUNK, await extractor.extract(DOC, CHUNK))
    types = {}
    for n in records.nodes:
        types.setdefault(n.type, []).append(n)
    assert len(types["entity"]) == 3 and len(types["triplet"]) == 2
    curie = next(n for n in types["entity"] if n.text == "Marie Curie")
    assert curie.id == entity_id("marie curie ") and curie.props["type"] == "Person"
    edge_types = sorted(e.type for e in records.edges)
    assert edge_types.count("OPENREL") == 2 and edge_types.count("MENTIONED_IN") == 2
    assert edge_types.count("CONTAINS") == 3
    warsaw = next(p for p in records.provenance if p.item_id == entity_id("Warsaw"))
    assert TEXT[warsaw.start:warsaw.end] == "Warsaw" and warsaw.chunk_id == "chunk:1"


TYPED = json.dumps({
    "entities": [{"entity_name": "Marie Curie", "entity_type": "Person"},
                 {"entity_name": "Warsaw", "entity_type": "Place"},
                 {"entity_name": "Nobel Prize in Physics", "entity_type": "Award"}],
    "relationships": [
        {"source_entity": "Marie Curie", "target_entity": "Warsaw", "relation": "was born in",
         "relation_type": "Origin"},
        {"source_entity": "Marie Curie", "target_entity": "Nobel Prize in Physics", "relation": "won"}]})


async def test_llm_extraction_types_subject_relation_and_object() -> None:
    """ToG-3 §3.2.1: a triple carries type_s, type_p and type_o, asked for in the prompt, kept in the
    triplet node and on its OPENREL edge; a relation given without a type gets no type property."""
    extractor, backend = _extractor(TYPED)
    ext = await extractor.extract(DOC, CHUNK)
    born, won = ext.triples
    assert (born.subject_type, born.relation_type, born.object_type) == ("Person", "Origin", "Place")
    assert (won.relation_type, won.object_type) == ("", "Award")
    assert "relation_type" in backend.requests[0].messages[0]["content"]
    records = extraction_records(CHUNK, ext)
    triplets = {n.props["predicate"]: n.props for n in records.nodes if n.type == "triplet"}
    assert triplets["was born in"]["relation_type"] == "Origin" and triplets["was born in"]["subject_type"] == "Person"
    assert "relation_type" not in triplets["won"] and triplets["won"]["object_type"] == "Award"
    rels = {e.props["predicate"]: e.props for e in records.edges if e.type == "OPENREL"}
    assert rels["was born in"] == {"predicate": "was born in", "subject_type": "Person", "relation_type": "Origin",
                                   "object_type": "Place"}
    assert rels["won"] == {"predicate": "won", "subject_type": "Person", "object_type": "Award"}


async def test_imported_triples_stay_untyped() -> None:
    facts = load_openie(FIXTURES / "openie_sample.jsonl")
    text = "Adela Morrow founded the Harbor Hill Observatory."
    chunk = Chunk("chunk:a", "p1", text, 0, len(text), 8, 0)
    extraction = await ImportExtractor(facts).extract(SourceDocument("p1", "", text, "x"), chunk)
    records = extraction_records(chunk, extraction)
    rels = [e.props for e in records.edges if e.type == "OPENREL"]
    assert rels and all(set(props) == {"predicate"} for props in rels)


def test_openie_import_skips_and_counts_bad_records() -> None:
    facts = load_openie(FIXTURES / "openie_sample.jsonl")
    assert set(facts.by_doc) == {"p1", "p2", "p3"}
    assert len(facts.by_doc["p1"].triples) == 2 and len(facts.by_doc["p2"].triples) == 1
    assert len(facts.skipped) == 3  # two bad triples and one bad line
    assert any(":3:" in s for s in facts.skipped)
    with pytest.raises(InputError, match="not found"):
        load_openie(FIXTURES / "missing.jsonl")


def test_triple_files_tsv_and_csv() -> None:
    tsv = load_triple_file(FIXTURES / "triples.tsv")
    assert [t.object for t in tsv.by_doc["triples:triples.tsv"].triples] == ["Morrow Yard"]
    assert [t.object for t in tsv.by_doc["p3"].triples] == ["Kestrel Bay"]
    assert len(tsv.skipped) == 1 and "3 or 4" in tsv.skipped[0]
    csv_facts = load_triple_file(FIXTURES / "triples.csv")
    assert len(csv_facts.by_doc["triples:triples.csv"].triples) == 2


async def test_import_extractor_places_facts_in_the_right_chunk() -> None:
    facts = load_openie(FIXTURES / "openie_sample.jsonl")
    text = "Adela Morrow was a shipbuilder. " * 3 + "Later the Harbor Hill Observatory opened in 1887."
    doc = SourceDocument("p1", "", text, "x")
    first = Chunk("chunk:a", "p1", text[:40], 0, 40, 8, 0)
    second = Chunk("chunk:b", "p1", text[40:], 40, len(text), 20, 1)
    ex = ImportExtractor(facts)
    in_first = await ex.extract(doc, first)
    in_second = await ex.extract(doc, second)
    assert ("Adela Morrow", "founded", "Harbor Hill Observatory") in [
        (t.subject, t.predicate, t.object) for t in in_first.triples]
    assert ("Harbor Hill Observatory", "founded in", "1887") in [
        (t.subject, t.predicate, t.object) for t in in_second.triples]
    assert (await ex.extract(SourceDocument("zz", "", "t", "x"), first)).triples == []


def test_nolm_entities() -> None:
    names = entities_in("After the war, Lena Sorensen of Velden rebuilt the Morrow Refractor in 1946.")
    assert "Lena Sorensen of Velden" in names or {"Lena Sorensen", "Velden"} <= set(names)
    assert "Morrow Refractor" in names and "1946" in names
    assert "After" not in names and "The" not in names


async def test_nolm_extractor_links_cooccurring_entities() -> None:
    ext = await NoLMExtractor().extract(DOC, CHUNK)
    names = [e.name for e in ext.entities]
    assert names[0] == "Curie" and "Marie Curie" in names and "Warsaw" in names
    assert ("Marie Curie", "Warsaw") in ext.cooccurrences
    records = extraction_records(CHUNK, ext)
    assert any(e.type == "CO_OCCURS" for e in records.edges) and not ext.propositions


ABOUT = ("Grace Krilanovich is an American author. Her first novel was published by Two Dollar Radio. "
         "Her story appeared in Shelf Unbound with Ann Moss.")


@pytest.mark.parametrize("extractor", [NoLMExtractor, SpacyExtractor])
async def test_the_title_entity_is_linked_to_the_entities_of_sentences_that_do_not_name_it(extractor: type) -> None:
    doc = SourceDocument("d3", "Grace Krilanovich", ABOUT, "d3.txt")
    chunk = Chunk("chunk:3", "d3", ABOUT, 0, len(ABOUT), 30, 0)
    pairs = {frozenset(p) for p in (await extractor().extract(doc, chunk)).cooccurrences}
    assert frozenset(("Grace Krilanovich", "Shelf Unbound")) in pairs  # a sentence that says "her"
    assert frozenset(("Shelf Unbound", "Ann Moss")) in pairs  # the sentence's own pair stays
    off = {frozenset(p) for p in (await extractor(title_links=False).extract(doc, chunk)).cooccurrences}
    assert frozenset(("Grace Krilanovich", "Shelf Unbound")) not in off
    assert frozenset(("Shelf Unbound", "Ann Moss")) in off
    # a sentence proposition mentions what it names (the title only where the sentence names it: linking
    # every sentence to its title cost topg two of HotpotQA's first 20 answers, docs/answer-quality.md)
    said = {p.text: p.entities for p in (await extractor(sentence_propositions=True).extract(doc, chunk)).propositions}
    assert "Grace Krilanovich" not in said["Her story appeared in Shelf Unbound with Ann Moss."]
    untitled = SourceDocument("d4", "notes-2", ABOUT, "notes-2.txt")  # a title that is no name links nothing
    assert {frozenset(p) for p in (await extractor().extract(untitled, chunk)).cooccurrences} == off


async def test_nolm_sentence_propositions_for_topg() -> None:
    ext = await NoLMExtractor(sentence_propositions=True).extract(DOC, CHUNK)
    assert ext.propositions and all(p.entities for p in ext.propositions)
    first = next(p for p in ext.propositions if "Warsaw" in p.entities)
    assert "Marie Curie" in first.entities and first.text in " ".join(CHUNK.text.split())
    records = extraction_records(CHUNK, ext)
    assert any(e.type == "MENTIONS" for e in records.edges) and any(n.type == "proposition" for n in records.nodes)


NOISY = ("Chris Martin, the lead singer of Coldplay, was born on 2 March 1977 in Exeter. "
         "Page 3 of 5 | Main page | Contents. The Beatles' album Abbey Road was released by Apple Records.")


async def test_spacy_extractor_names_typed_entities_not_dates_or_navigation() -> None:
    doc = SourceDocument("d2", "Chris Martin", NOISY, "d2.txt")
    chunk = Chunk("chunk:2", "d2", NOISY, 0, len(NOISY), 40, 0)
    ext = await SpacyExtractor(sentence_propositions=True).extract(doc, chunk)
    types = {e.name: e.type for e in ext.entities}
    assert {"Chris Martin", "Coldplay", "Exeter", "Apple Records", "1977"} <= set(types)
    assert types["Chris Martin"] == "PERSON" and types["1977"] == "DATE"
    assert "Beatles" in types and "The Beatles" not in types  # determiner and possessive dropped
    assert not {"March", "2 March", "Page", "Main", "3"} & set(types)  # dates and numbers are not names
    assert ("Chris Martin", "Coldplay") in ext.cooccurrences
    assert ext.propositions and all(p.entities for p in ext.propositions)


def test_spacy_extractor_without_its_pipeline_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="no_such_pipeline"):
        _ = SpacyExtractor("no_such_pipeline").nlp


# An extraction keeps only what the passage names (index/grounding.py).
LENS_TEXT = "Orla Vance ground the lens of the Kestrel Bay telescope in 1902."
LENS_DOC = SourceDocument("d2", "Kestrel Bay", LENS_TEXT, "d2.txt")
LENS_CHUNK = Chunk("chunk:2", "d2", LENS_TEXT, 0, len(LENS_TEXT), 12, 0)
PROMPT_EXAMPLE = json.dumps({  # what Gemma 3 270M returned for every passage: the prompt's own example
    "entities": [{"entity_name": "Marie Curie", "entity_type": "Person"}, {"entity_name": "Warsaw"}],
    "relationships": [{"source_entity": "Marie Curie", "target_entity": "Warsaw", "relation": "was born in"}]})


async def test_an_echo_of_the_prompts_example_is_a_failed_extraction_not_the_passages_graph() -> None:
    extractor, _ = _extractor(PROMPT_EXAMPLE)
    with pytest.raises(StructuredOutputError, match="names nothing the passage contains .*Marie Curie"):
        await extractor.extract(LENS_DOC, LENS_CHUNK)
    extractor, _ = _extractor(PROMPT_EXAMPLE)
    assert [e.name for e in (await extractor.extract(DOC, CHUNK)).entities] == ["Marie Curie", "Warsaw"]


async def test_names_the_passage_lacks_are_dropped_with_their_triples() -> None:
    mixed = json.dumps({
        "entities": [{"entity_name": "Vance"}, {"entity_name": "kestrel bay  telescope"}, {"entity_name": "Warsaw"},
                     {"entity_name": "The Of"}, {"entity_name": "Round"}],
        "relationships": [{"source_entity": "Vance", "target_entity": "Kestrel Bay telescope", "relation": "ground"},
                          {"source_entity": "Vance", "target_entity": "Warsaw", "relation": "visited"}]})
    extractor, _ = _extractor(mixed)
    ext = await extractor.extract(LENS_DOC, LENS_CHUNK)
    # a word of the name grounds it ("Vance"), case and spacing do not matter, common words ground nothing,
    # nor does a piece of a word ("Round" in "ground")
    assert [e.name for e in ext.entities] == ["Vance", "kestrel bay  telescope"]
    assert [(t.subject, t.object) for t in ext.triples] == [("Vance", "Kestrel Bay telescope")]
    empty = json.dumps({"entities": [], "relationships": []})
    extractor, _ = _extractor(empty)
    assert (await extractor.extract(LENS_DOC, LENS_CHUNK)).entities == []  # naming nothing is no failure


async def test_proposition_extraction_keeps_only_grounded_entities_and_propositions() -> None:
    from thinkgraph.index.extract_propositions import PropositionExtractor

    ner = json.dumps({"entities": ["Orla Vance", "Marie Curie"]})
    props = json.dumps({"propositions": [
        {"text": "Orla Vance ground the lens.", "entities": ["Orla Vance", "Marie Curie"]},
        {"text": "Marie Curie was born in Warsaw.", "entities": ["Marie Curie", "Warsaw"]},
        {"text": "The lens was ground in 1902.", "entities": []}]})
    extractor = PropositionExtractor(LLM(ScriptedBackend.of([ner, props]), settings=LLMSettings(model="m")))
    ext = await extractor.extract(LENS_DOC, LENS_CHUNK)
    assert [e.name for e in ext.entities] == ["Orla Vance"]
    assert [(p.text, p.entities) for p in ext.propositions] == [
        ("Orla Vance ground the lens.", ["Orla Vance"]), ("The lens was ground in 1902.", [])]
    echoed = PropositionExtractor(LLM(ScriptedBackend.of([json.dumps({"entities": ["Marie Curie"]}), props]),
                                      settings=LLMSettings(model="m")))
    with pytest.raises(StructuredOutputError):
        await echoed.extract(LENS_DOC, LENS_CHUNK)
