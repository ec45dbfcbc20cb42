"""The reader's evidence compacted to the sentences that bear on the question ([reader]
evidence_sentences, retrieval/compaction.py): what is kept and marked, the tokens saved, the setting
off giving the previous prompt byte for byte, the setting reaching every run (``-o``, ``eval -m
ppr:evidence_sentences=N``, TOML, the environment), and citations that stay exact spans of the
original passages."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from thinkgraph.config import ReaderSettings, load_settings
from thinkgraph.errors import ConfigError
from thinkgraph.eval.datasets import Question
from thinkgraph.eval.runner import EvalRunner, MethodSpec
from thinkgraph.llm.backend import ChatRequest
from thinkgraph.methods.layout import Notes
from thinkgraph.methods.reader import ANSWER_PROMPT, READER_INSTRUCTION, reader_prompt, reading
from thinkgraph.methods.replies import answer_format
from thinkgraph.retrieval.compaction import ELISION, compact, compact_passages
from thinkgraph.retrieval.evidence import ScoredPassage
from thinkgraph.testing import ScriptedBackend
from thinkgraph.tokens import TokenCounter

QUESTION = "Where is the company that Alice Stone founded based?"
ALICE = ("Alice Stone was born in Dunmere in 1961. She studied chemistry at the Royal College of Dunmere. "
         "After her studies she worked for a paint maker for ten years. In 1990 Alice Stone founded Acme Corp "
         "with two partners. The firm made paints and varnishes for ships. Stone retired in 2015 and moved to "
         "the coast.")
ACME = ("Acme Corp is a maker of paints and varnishes. It has about 2,000 employees in three plants. Acme Corp is "
        "based in Rivertown, on the Greenland river. The firm sells to shipyards in twelve countries. Its largest "
        "plant opened in 2001 near the harbour.")
MOON = ("The Moon orbits the Earth once a month. Its surface is covered in dust and craters. Twelve astronauts "
        "walked on it between 1969 and 1972. The far side cannot be seen from the Earth.")
CORPUS = {"c1": ("Alice Stone", ALICE), "c2": ("Acme Corp", ACME), "c3": ("Moon", MOON)}
FOUNDED = "In 1990 Alice Stone founded Acme Corp with two partners."
BASED = "Acme Corp is based in Rivertown, on the Greenland river."


def passages() -> list[ScoredPassage]:
    return [ScoredPassage(cid, cid, title, text, 1.0, 0, len(text)) for cid, (title, text) in CORPUS.items()]


def previous_prompt(question: str, shown: Sequence[ScoredPassage], notes: Sequence[Notes] = ()) -> str:
    """The reader's prompt as it was before compaction (methods/reader.py at 671f9ac), word for word."""
    rendered = "\n\n".join(n.render() for n in notes if n.lines)
    numbered = "\n\n".join(f"[{i}] {p.title + ': ' if p.title else ''}{p.text}" for i, p in enumerate(shown, 1))
    return ANSWER_PROMPT.format(notes=f"\n{rendered}\n" if rendered else "", passages=numbered,
                                answer_format=answer_format(question=question))


# --- which sentences are kept ----------------------------------------------------------------------------

def test_the_sentences_that_bear_on_the_question_are_kept_and_the_cuts_marked() -> None:
    shown = compact(ALICE, QUESTION, 1)
    assert shown.text == f"{ELISION} {FOUNDED} {ELISION}"
    shown = compact(ACME, QUESTION, 1)
    assert shown.text == f"{ELISION} {BASED} {ELISION}"  # "based" and "Based" meet; the topic's words weigh less
    # two kept sentences apart: one mark between them, none where the passage starts with a kept one
    two = compact(ALICE, "Where was Alice Stone born, and what did the firm make?", 2)
    assert two.text == f"{ALICE.split('. ')[0]}. {ELISION} The firm made paints and varnishes for ships. {ELISION}"


def test_a_kept_sentence_that_speaks_by_pronoun_brings_the_sentence_naming_whom() -> None:
    shown = compact(ALICE, "What did Alice Stone study at the Royal College?", 1)
    assert shown.text.startswith("Alice Stone was born in Dunmere in 1961. She studied chemistry")
    assert shown.text.endswith(f"Dunmere. {ELISION}")
    it = compact(ACME, "How many employees does it have?", 1)
    assert it.text == f"Acme Corp is a maker of paints and varnishes. It has about 2,000 employees in three plants. " \
                      f"{ELISION}"


def test_the_entities_linked_and_the_other_titles_weigh_beside_the_question() -> None:
    # the notes' entity path names Acme Corp, the bridge the question does not name
    question = "Which firm did the chemist from Dunmere start?"
    alone = compact(ALICE, question, 1)
    assert FOUNDED not in alone.text
    linked = compact(ALICE, question, 1, related=["Alice Stone -founded-> Acme Corp"])
    assert FOUNDED in linked.text
    shown = compact_passages(question, [("Alice Stone", ALICE), ("Acme Corp", ACME)], 1)
    assert FOUNDED in shown[0].text  # the other passage's title is the bridge


def test_a_short_passage_is_shown_whole() -> None:
    assert compact(MOON, "What orbits the Earth?", 4).text == MOON  # as many sentences as kept
    assert compact(MOON, "What orbits the Earth?", 5).whole
    # one short sentence left out: not worth a cut
    assert compact("Acme Corp is based in Rivertown. It is old. It sells paint.", QUESTION, 2).text == \
        "Acme Corp is based in Rivertown. It is old. It sells paint."
    assert compact(ALICE, QUESTION, 0).text == ALICE


def test_an_untitled_passage_keeps_its_first_sentence() -> None:
    titled = compact(ACME, "Where does the firm sell?", 1)
    untitled = compact(ACME, "Where does the firm sell?", 1, titled=False)
    assert not titled.text.startswith("Acme Corp is a maker") and untitled.text.startswith("Acme Corp is a maker")


def test_a_passage_without_a_word_of_the_question_shows_its_first_sentences() -> None:
    assert compact(MOON, QUESTION, 1).text == f"The Moon orbits the Earth once a month. {ELISION}"


# --- the prompt ---------------------------------------------------------------------------------------------

def test_off_the_prompt_is_the_previous_prompt_byte_for_byte() -> None:
    notes = [Notes("Entity paths linking the question to the passages", ["[1] Alice Stone ~ Acme Corp"])]
    before = previous_prompt(QUESTION, passages(), notes)
    assert reader_prompt(QUESTION, passages(), notes) == before
    assert reader_prompt(QUESTION, passages(), notes, keep=0) == before
    with reading(ReaderSettings()):
        assert reader_prompt(QUESTION, passages(), notes) == before
    with reading(ReaderSettings(evidence_sentences=1)):
        assert reader_prompt(QUESTION, passages(), notes) != before
    assert ReaderSettings().evidence_sentences == 0  # (the default: no N kept F1 on both datasets' curve)


def test_the_prompt_reads_fewer_tokens_and_keeps_its_layout() -> None:
    counter = TokenCounter()
    whole = reader_prompt(QUESTION, passages())
    cut = reader_prompt(QUESTION, passages(), keep=1)
    assert counter.count(cut) < counter.count(whole) - 100
    assert FOUNDED in cut and BASED in cut and "[3] Moon: " in cut
    assert cut.startswith(READER_INSTRUCTION) and cut.endswith(f"Question: {QUESTION}")


# --- citations stay exact spans -----------------------------------------------------------------------------

def test_a_quote_from_a_compacted_passage_maps_to_its_span_of_the_original() -> None:
    shown = compact(ALICE, "Where was Alice Stone born, and what did the firm make?", 2)
    for sentence in ("The firm made paints and varnishes for ships.", "Alice Stone was born in Dunmere in 1961."):
        start, end = shown.locate(sentence) or (0, 0)
        assert ALICE[start:end] == sentence and (start, end) in [(ALICE.index(sentence),
                                                                  ALICE.index(sentence) + len(sentence))]
    assert shown.kept == [(0, ALICE.index(".") + 1), (ALICE.index("The firm"), ALICE.index("ships.") + 6)]
    # text across a mark is no quote of the original
    across = shown.text.index("1961.")
    assert shown.original_span(across, across + 10) is None and shown.locate("nothing like it") is None


def reader_reply(request: ChatRequest) -> str:
    """A careful reader: Rivertown when both hops are shown, citing the passages it read them in."""
    prompt = request.messages[-1]["content"]
    numbers = {ln[1:ln.index("]")]: ln for ln in prompt.splitlines() if ln[:1] == "[" and ln[1:2].isdigit()}
    a = next((n for n, ln in numbers.items() if "founded Acme Corp" in ln), None)
    b = next((n for n, ln in numbers.items() if "based in Rivertown" in ln), None)
    if a is None or b is None:
        return "Reasoning: the passages do not link them.\nAnswer: Unknown"
    return f"Reasoning: Alice Stone founded Acme Corp [{a}], based in Rivertown [{b}].\nAnswer: Rivertown [{a}][{b}]"


@pytest.fixture
def open_long(tmp_path: Path):  # noqa: ANN201
    """An index of three passages of several sentences each (the model-free extractor)."""
    from support import index_opener

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": cid, "title": title, "text": text}) + "\n"
                              for cid, (title, text) in CORPUS.items()), encoding="utf-8")
    yield from index_opener(tmp_path / "long.db", lambda tg: tg.index([corpus]))


def test_citations_of_a_compacted_answer_are_exact_spans_the_model_was_shown(open_long) -> None:  # noqa: ANN001
    backend = ScriptedBackend(rules=[(READER_INSTRUCTION, reader_reply)])
    tg = open_long(backend)
    answer = tg.ask(QUESTION, method="ppr", evidence_sentences=1)
    prompt = backend.requests[-1].messages[0]["content"]
    assert answer.status == "answered" and answer.text == "Rivertown" and ELISION in prompt
    assert {c.quote for c in answer.citations} == {FOUNDED, BASED}
    for citation in answer.citations:
        text = CORPUS[citation.doc_id][1]  # (each document is one passage: document offsets are the passage's)
        assert citation.start is not None and citation.end is not None
        assert text[citation.start:citation.end] == citation.quote and citation.quote in prompt
    step = next(s for s in answer.trace if s.prompt == "READER")
    spans = step.inputs["kept_spans"]
    assert step.inputs["evidence_sentences"] == 1
    assert all((c.start, c.end) in spans[c.chunk_id] for c in answer.citations)


# --- the setting reaches every run ----------------------------------------------------------------------------

def test_default_runs_send_the_prompt_they_sent_before(open_long) -> None:  # noqa: ANN001
    backend = ScriptedBackend(rules=[(READER_INSTRUCTION, reader_reply)])
    tg = open_long(backend)
    tg.ask(QUESTION, method="ppr")
    again = tg.ask(QUESTION, method="ppr", evidence_sentences=0)
    (request,) = backend.requests  # the same prompt: the index's LLM cache answered the second
    assert again.cost.cached_calls == 1 and again.text == "Rivertown"
    assert ELISION not in request.messages[0]["content"] and ALICE in request.messages[0]["content"]
    step = next(s for s in tg.ask(QUESTION, method="naive").trace if s.prompt == "READER")
    assert "kept_spans" not in step.inputs and "evidence_sentences" not in step.inputs


async def test_eval_runs_a_method_with_the_reader_setting_beside_it(open_long, tmp_path: Path) -> None:  # noqa: ANN001
    backend = ScriptedBackend(rules=[(READER_INSTRUCTION, reader_reply)])
    tg = open_long(backend)
    specs = [MethodSpec.parse("ppr"), MethodSpec.parse("ppr:evidence_sentences=1")]
    assert specs[1].options == {"evidence_sentences": 1}
    question = Question("q1", QUESTION, ("Rivertown",), ("c1", "c2"))
    rows = await EvalRunner(tg, specs, tmp_path / "out").run([question])
    by_label = {r["method"]: r for r in rows}
    assert by_label["ppr"]["em"] == by_label["ppr:evidence_sentences=1"]["em"] == 100
    assert by_label["ppr:evidence_sentences=1"]["prompt_tokens_p95"] < by_label["ppr"]["prompt_tokens_p95"]


def test_the_setting_is_an_option_of_every_method_and_a_checked_value(open_long) -> None:  # noqa: ANN001
    from thinkgraph.config import Settings
    from thinkgraph.methods import catalog

    for name in ("ppr", "naive", "a2rag", "tog3", "kgr"):
        catalog.get(name).make_config(Settings(), {"evidence_sentences": 2})
    with pytest.raises(ConfigError, match="evidence_sentences"):
        catalog.get("ppr").make_config(Settings(), {"evidence_sentences": -1})
    with pytest.raises(ConfigError, match="its options: .*evidence_sentences"):
        catalog.get("naive").make_config(Settings(), {"evidence_sentence": 2})
    assert catalog.run_settings(Settings(), {"top_k": 3}).reader.evidence_sentences == 0
    assert catalog.run_settings(Settings(), {"evidence_sentences": 3}).reader.evidence_sentences == 3
    with pytest.raises(ConfigError, match="evidence_sentences"):
        open_long(ScriptedBackend()).ask(QUESTION, method="ppr", evidence_sentences="many")


def test_the_setting_from_toml_and_the_environment(tmp_path: Path) -> None:
    toml = tmp_path / "thinkgraph.toml"
    toml.write_text("[reader]\nevidence_sentences = 2\n", encoding="utf-8")
    assert load_settings(toml, env={}).reader.evidence_sentences == 2
    assert load_settings(toml, env={"THINKGRAPH_READER_EVIDENCE_SENTENCES": "3"}).reader.evidence_sentences == 3
    empty = tmp_path / "empty.toml"
    empty.write_text("", encoding="utf-8")
    assert load_settings(empty, env={}).reader == ReaderSettings()
