"""Entities a reader would accept from the model-free extractors (no headings, describing titles, lone
day or month names or cut names), and graph paths that start from what the question names."""

from __future__ import annotations

import pytest

from support import FIXTURES, HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.index.extract_nolm import NoLMExtractor, SpacyExtractor, document_entity
from thinkgraph.models import Chunk, SourceDocument
from thinkgraph.names import body_lines, clean_name, entities_in, is_name_like, is_value

MARKDOWN = """# People of the Harbor Hill story

**Ilse Brandt** (1852-1930) was an optician from Leipzig. Her lens was installed in November 1895.
During the Second World War the tower was closed; it opens every Friday.
"""


def test_names_keep_ordinals_that_start_them_and_drop_lone_calendar_words() -> None:
    assert clean_name("Second World War") == "Second World War" and clean_name("Second") is None
    assert clean_name("Friday") is None and clean_name("November") is None
    assert clean_name("June Carter") == "June Carter"  # a month name inside a name stays
    assert entities_in("It opens every Friday, in November.") == []


@pytest.mark.parametrize("title, name_like", [
    ("2014 FIFA World Cup", True), ("Arthur's Magazine", True), ("Department of Physics", True), ("Born to Run", True),
    ("People of the Harbor Hill story", False), ("List of tallest buildings", False), ("notes-2", False)])
def test_titles_that_read_as_names(title: str, name_like: bool) -> None:
    assert is_name_like(title) is name_like
    doc = SourceDocument("d", title, "text", "d.md")
    assert (document_entity(doc) is not None) is name_like


def test_heading_lines_are_left_out_of_the_text_names_are_read_from() -> None:
    body = body_lines(MARKDOWN)
    assert "People of the Harbor Hill" not in body and "Ilse Brandt" in body
    assert len(body) == len(MARKDOWN) - len("# People of the Harbor Hill story")  # lines kept, heading emptied


@pytest.mark.parametrize("extractor", [NoLMExtractor(), SpacyExtractor()], ids=["nolm", "spacy"])
async def test_model_free_extractors_make_no_entity_of_headings_markup_or_dates(extractor) -> None:  # noqa: ANN001
    doc = SourceDocument("people.md", "People of the Harbor Hill story", MARKDOWN, "people.md")
    chunk = Chunk("chunk:p", doc.id, MARKDOWN, 0, len(MARKDOWN), 60, 0)
    names = {e.name for e in (await extractor.extract(doc, chunk)).entities}
    assert {"Ilse Brandt", "Leipzig"} <= names
    assert not names & {"People of the Harbor Hill story", "People of the Harbor Hill", "Friday", "November",
                        "World War", "**Ilse Brandt**"}
    assert not any("*" in n or n.startswith("#") for n in names)


def test_graph_paths_start_from_the_entities_the_question_names(tmp_path) -> None:  # noqa: ANN001
    with ThinkGraph(tmp_path / "b.db", settings=Settings(), embedder=HashEmbedder()) as tg:
        tg.index([FIXTURES / "bridge_corpus.jsonl"], openie=FIXTURES / "bridge_openie.jsonl")
        answer = tg.ask("Where is the company that Alice Stone founded based?", "ppr")
    assert answer.evidence.path_texts
    starts = {path[0] for path in answer.evidence.paths if path}
    alice = {n.id for n in answer.evidence.nodes if n.text == "Alice Stone"}
    assert starts == alice  # not the bridge entities the first walk found (Acme Corp, 1990)
    assert all(text.split("] ", 1)[1].startswith("Alice Stone") for text in answer.evidence.path_texts)


@pytest.mark.parametrize(("text", "value"), [
    ("1986", True), ("4 July 1776", True), ("in the 1990s", False), ("1990s", True), ("6,960", True),
    ("March 5, 1892", True), ("The 1975", False), ("Leland, North Carolina", False), ("2014 FIFA World Cup", False),
    ("May", False), ("", False)])
def test_a_value_is_a_bare_date_or_number_not_a_name(text: str, value: bool) -> None:
    assert is_value(text) is value
