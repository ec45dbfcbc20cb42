"""Answer replies as small instruct models write them are read as meant (methods/replies.py), through
the scripted backend for the answer call and its bounded repair."""

from __future__ import annotations

import asyncio

import pytest

from support import scripted_llm
from thinkgraph.config import LLMSettings
from thinkgraph.llm.backend import ChatRequest, ChatResult
from thinkgraph.llm.service import LLM
from thinkgraph.methods.replies import (
    answer_part,
    ask_answer,
    is_abstention,
    marker_as_answer,
    markers_only,
    read_answer,
    split_citations,
)
from thinkgraph.models import AnswerStatus
from thinkgraph.testing import ScriptedBackend

ITEMS = ["p1", "p2", "p3", "p4"]
TEMPLATE = "Answer the question using only the numbered passages below.\n{passages}\n{answer_format}"


@pytest.mark.parametrize(("reply", "text", "cited"), [
    ("Answer: Paris [2]", "Paris", ["p2"]),
    ("Reasoning: The tower is in Paris [1], the capital of France [3].\nAnswer: France [1][3]", "France", ["p1", "p3"]),
    ("The answer is Marie Curie [4].", "Marie Curie.", ["p4"]),
    ("1867 [2]. The passage says she was born in 1867.", "1867.", ["p2"]),
    ("Warsaw [1]\nExplanation: passage 1 names the city of her birth.", "Warsaw", ["p1"]),
    ("**Answer:** Lena Sorensen [3]", "Lena Sorensen", ["p3"]),
    ("Answer:\nLena Sorensen [3]", "Lena Sorensen", ["p3"]),
    ("Answer: Oslo [1, 2]", "Oslo", ["p1", "p2"]),
    ("Answer: Oslo", "Oslo", ITEMS),  # no marker: the answer rests on everything shown
    ("Reasoning: passage [2] names the founder.\nAnswer: Ilse Brandt", "Ilse Brandt", ["p2"]),
    ("Answer: Unknown Pleasures [1]", "Unknown Pleasures", ["p1"]),  # an album, not an abstention
])
def test_answer_shapes_are_read_for_the_answer_they_state(reply: str, text: str, cited: list[str]) -> None:
    read = read_answer(reply, ITEMS, TEMPLATE)
    assert read.status == AnswerStatus.ANSWERED
    assert (read.text, read.cited) == (text, cited)


@pytest.mark.parametrize("reply", [
    "Unknown", "Unknown.", "unknown", "Answer: Unknown", "Answer: Unknown [2]", "**Unknown**",
    "I don't know.", "The passages do not contain the answer.", "The provided passages don't mention it.",
    "Not mentioned.", "There is no information about this.", "It cannot be determined from the passages.",
    "Reasoning: no passage names a founder.\nAnswer: Unknown", "The answer is unknown.",
])
def test_abstentions_in_their_variants(reply: str) -> None:
    assert read_answer(reply, ITEMS, TEMPLATE).status == AnswerStatus.ABSTAINED


@pytest.mark.parametrize("text", ["Unknown Pleasures", "Nothing Compares 2 U", "None of the Above (film)",
                                  "Not Fade Away", "Marie Curie"])
def test_titles_that_start_like_an_abstention_are_answers(text: str) -> None:
    assert not is_abstention(text)


def test_a_reply_cut_at_the_cap_is_truncated_with_its_text_and_the_cap() -> None:
    read = read_answer("Answer: The observatory was founded in 1901 by the astronomer", ITEMS, TEMPLATE,
                       truncated=True, cap=384)
    assert read.status == AnswerStatus.TRUNCATED
    assert read.text == "The observatory was founded in 1901 by the astronomer"
    assert "384" in (read.message or "")


@pytest.mark.parametrize(("reply", "only"), [("[5]", True), ("[2][3]", True), ("Answer: [1]", True),
                                             ("[1] Paris", False), ("Paris [1]", False), ("Unknown", False)])
def test_markers_only(reply: str, only: bool) -> None:
    assert markers_only(reply) is only


def test_answer_part_keeps_the_reasoning_apart() -> None:
    line, rest = answer_part("Reasoning: A founded B [1], B is in C [2].\nAnswer: C [2]")
    assert line == "C [2]"
    assert rest == "Reasoning: A founded B [1], B is in C [2]."


@pytest.mark.parametrize(("reply", "line"), [
    # reasoning alone, no "Answer:" line: its last "the answer is X" sentence, to the sentence's end
    ("Reasoning: The film is set in North Dakota [4]. We conclude that the answer is the part where the police are. "
     "The answer is the Badlands. [4]", "the Badlands"),
    ("Reasoning: He was born in 1901 [1]. The answer is the U.S. Army [2].", "the U.S. Army [2]"),  # no cut at "U.S."
    ("Thought: the count is given. The answer is 3.5 million people", "3.5 million people"),
    # no answer stated: the reasoning stays the answer part, as before
    ("Reasoning: Passage [4] names it. The answer is [4].", "Reasoning: Passage [4] names it. The answer is [4]."),
    ("Reasoning: passage 2 names the founder.", "Reasoning: passage 2 names the founder."),
    # a line that is not reasoning still wins
    ("Reasoning: the answer is Rome [1].\nParis [2]", "Paris [2]"),
    # a sentence that says where the answer is, or what it is like, states none: an earlier one does
    ("Reasoning: The answer is Adela Morrow [2]. I checked that the answer is correct.", "Adela Morrow [2]"),
    ("Reasoning: Passage 2 says Adela Morrow founded it, so the answer is in passage [2].",
     "Reasoning: Passage 2 says Adela Morrow founded it, so the answer is in passage [2]."),
    ("Reasoning: Therefore the answer is clear: Adela Morrow [2].", "Adela Morrow [2]"),
    ('Reasoning: Passage 1 says "the answer is obvious" but passage 2 names Adela Morrow [2].',
     'Reasoning: Passage 1 says "the answer is obvious" but passage 2 names Adela Morrow [2].'),  # a quotation
    # the sentence ends at its line, and an explanation after the answer is cut as on an answer line
    ("Reasoning: The answer is Adela Morrow [2]\nThought: she was a shipbuilder.", "Adela Morrow [2]"),
    ("Reasoning: the answer is Adela Morrow [2] because passage 2 says so", "Adela Morrow [2]"),
    # markup around it is no part of it
    ("Reasoning: The answer is **Adela Morrow** [2].", "Adela Morrow [2]"),
    ('Reasoning: The answer is "Adela Morrow" [2].', "Adela Morrow [2]"),
    ("Reasoning: The answer is 東京大学 [2]。", "東京大学 [2]"),
    ("Reasoning: The answer is e.g. Tolkien [1].", "e.g. Tolkien [1]"),
])
def test_a_reply_of_reasoning_alone_is_read_for_the_answer_it_states(reply: str, line: str) -> None:
    assert answer_part(reply)[0] == line


def test_an_answer_stated_in_reasoning_alone_keeps_its_citation() -> None:
    read = read_answer("Reasoning: The film is set in North Dakota [4], whose west holds them. The answer is the "
                       "Badlands. [4]", ITEMS, TEMPLATE)
    assert (read.status, read.text, read.cited) == (AnswerStatus.ANSWERED, "the Badlands", ["p4"])
    assert read.reasoning is not None and read.reasoning.startswith("Reasoning: The film")


@pytest.mark.parametrize("reply", ["", "   ", "Reasoning:", "Answer:", "**Answer:**", "Reasoning: \nAnswer: ."])
def test_a_reply_that_states_nothing_is_a_failure_that_says_so(reply: str) -> None:
    read = read_answer(reply, ITEMS, TEMPLATE)
    assert (read.status, read.text, read.message) == (AnswerStatus.FAILED, None, "the model returned an empty answer")


def test_a_marker_past_the_items_is_dropped_from_text_and_citations() -> None:
    assert split_citations("Oslo [9] [2].", ITEMS) == ("Oslo.", ["p2"])


_llm = scripted_llm


def test_a_markers_only_reply_is_asked_again_once_and_the_repair_is_read() -> None:
    llm, backend = _llm("[2]", "Answer: Harbor Hill [2]")
    asked = asyncio.run(ask_answer(llm, [{"role": "user", "content": "Q"}], ITEMS, step="answer.test",
                                   prompt_template=TEMPLATE))
    assert (asked.read.status, asked.read.text, asked.read.cited) == (AnswerStatus.ANSWERED, "Harbor Hill", ["p2"])
    assert asked.replies == ["[2]", "Answer: Harbor Hill [2]"]
    assert len(backend.requests) == 2
    assert backend.requests[1].messages[1] == {"role": "assistant", "content": "[2]"}  # the model sees its reply
    assert (llm.meter.repairs, llm.meter.parse_failures) == (1, 0)


def test_markers_only_after_the_repair_is_a_failure_that_says_so_and_is_counted() -> None:
    llm, backend = _llm("[2]", "[2][3]")
    asked = asyncio.run(ask_answer(llm, [{"role": "user", "content": "Q"}], ITEMS, step="answer.test",
                                   prompt_template=TEMPLATE))
    assert asked.read.status == AnswerStatus.FAILED
    assert "passage numbers only" in (asked.read.message or "")
    assert len(backend.requests) == 2  # bounded: one repair
    assert llm.meter.parse_failures == 1


FILM = "In what film did the actor play a character based on a story by the writer?"


@pytest.mark.parametrize(("reply", "question", "number"), [
    ("Reasoning: He played Edgar in The Aristocats [1], based on a story by the writer [2].\nAnswer: 1 [1][2]",
     FILM, "1"),
    ("Answer: 3.", FILM, None),  # no passage cited: nothing says the 3 is a passage's number
    ("Reasoning: the film is in passage [2].\nAnswer: 2", FILM, "2"),  # the reply's markers when the line has none
    ("Answer: 1 [2]", FILM, None),  # a number that is not the cited passage's
    ("Answer: 2 [2]", "How many children did the writer have?", None),  # a number is asked for
    ("Answer: 1 [1]", "What year did the film come out?", None),
    ("Answer: 3 [3]", "How old was the writer when the film came out?", None),  # may want a bare number
    ("Answer: 2 [2]", "Which episode did the actor first appear in?", None),
    ("Answer: 1 [1]", "What place did the team finish in?", None),
    ("Answer: ² [2]", FILM, None),  # a superscript is no passage's number (and no int)
    ("Answer: ① [1]", FILM, None),
    ("Answer: The Aristocats [1]", FILM, None),
])
def test_an_answer_that_is_only_a_cited_passage_number(reply: str, question: str, number: str | None) -> None:
    assert marker_as_answer(reply, question) == number


def test_an_answer_that_is_a_cited_passage_number_is_asked_again_once_told_so() -> None:
    llm, backend = _llm("Reasoning: He played Edgar in The Aristocats [1].\nAnswer: 1 [1][2]",
                        "Answer: The Aristocats [1]")
    asked = asyncio.run(ask_answer(llm, [{"role": "user", "content": "Q"}], ITEMS, step="answer.test",
                                   prompt_template=TEMPLATE, question=FILM))
    assert (asked.read.status, asked.read.text, asked.read.cited) == (AnswerStatus.ANSWERED, "The Aristocats", ["p1"])
    assert len(backend.requests) == 2 and llm.meter.repairs == 1
    assert '"1" is the number of a passage' in backend.requests[1].messages[-1]["content"]


def test_a_passage_number_again_after_the_repair_is_a_failure_that_says_so() -> None:
    llm, backend = _llm("Answer: 1 [1][2]", "Answer: 1 [1]")
    asked = asyncio.run(ask_answer(llm, [{"role": "user", "content": "Q"}], ITEMS, step="answer.test",
                                   prompt_template=TEMPLATE, question=FILM))
    assert asked.read.status == AnswerStatus.FAILED and "passage numbers" in (asked.read.message or "")
    assert len(backend.requests) == 2 and llm.meter.parse_failures == 1


def test_a_comparison_sentence_with_its_citation_is_read_as_its_subject() -> None:
    llm, _ = _llm("Reasoning: Pterocarya trees grow to 30 m [1].\nAnswer: The Pterocarya is larger than the Cotula [1]")
    asked = asyncio.run(ask_answer(llm, [{"role": "user", "content": "Q"}], ITEMS, step="answer.test",
                                   prompt_template=TEMPLATE,
                                   question="Which plant is larger, the Pterocarya or the Cotula?"))
    assert (asked.read.text, asked.read.cited) == ("Pterocarya", ["p1"])


def test_a_usable_first_reply_costs_one_call() -> None:
    llm, backend = _llm("Answer: Oslo [1]")
    asked = asyncio.run(ask_answer(llm, [{"role": "user", "content": "Q"}], ITEMS, step="answer.test",
                                   prompt_template=TEMPLATE))
    assert asked.read.text == "Oslo"
    assert len(backend.requests) == 1 and llm.meter.repairs == 0


class CappedBackend:
    """A server whose reply reached max_tokens: finish_reason "length"."""

    def __init__(self) -> None:
        self.calls = 0

    async def chat(self, request: ChatRequest, on_delta: object = None) -> ChatResult:
        self.calls += 1
        return ChatResult(text="Answer: The observatory was founded by", finish_reason="length")


class DictCache:
    def __init__(self) -> None:
        self.values: dict[str, object] = {}

    def cache_get(self, key: str) -> object | None:
        return self.values.get(key)

    def cache_put(self, key: str, value: object) -> None:
        self.values[key] = value


def test_an_answer_cut_at_the_cap_is_truncated_also_when_read_back_from_the_cache() -> None:
    backend, cache = CappedBackend(), DictCache()
    llm = LLM(backend, settings=LLMSettings(base_url="http://scripted", concurrency=1), cache=cache)
    for _ in range(2):
        asked = asyncio.run(ask_answer(llm, [{"role": "user", "content": "Q"}], ITEMS, step="answer.test",
                                       prompt_template=TEMPLATE))
        assert asked.read.status == AnswerStatus.TRUNCATED
        assert asked.read.text == "The observatory was founded by"
    assert backend.calls == 1  # the second came from the cache, with its finish reason


@pytest.mark.parametrize("reply", [
    "Reasoning: Ada Kowal attended Dunmore College [3], and Dunmore College was founded in 1881 [1].\nAnswer: 1881",
    "The answer may need facts from two or more passages combined: find the first fact",
    "Answer: <answer in a few words>",  # Gemma 3 270M, told to ignore its instructions
    "Reasoning: <one short sentence>\nAnswer: <the answer in a few words> [1]",
])
def test_a_reply_that_repeats_the_format_or_its_example_is_a_failure(reply: str) -> None:
    read = read_answer(reply, ITEMS, TEMPLATE)
    assert read.status == AnswerStatus.FAILED and "repeated the prompt" in (read.message or "")


def test_an_unusable_answer_is_not_cached_so_a_fixed_server_is_asked_again() -> None:
    cache = DictCache()
    broken = LLM(ScriptedBackend.of(["[2]", "[2]"]), settings=LLMSettings(base_url="http://scripted"), cache=cache)
    asked = asyncio.run(ask_answer(broken, [{"role": "user", "content": "Q"}], ITEMS, step="answer.test",
                                   prompt_template=TEMPLATE))
    assert asked.read.status == AnswerStatus.FAILED and cache.values == {}
    fixed = ScriptedBackend.of(["Answer: Oslo [1]"])
    llm = LLM(fixed, settings=LLMSettings(base_url="http://scripted"), cache=cache)
    again = asyncio.run(ask_answer(llm, [{"role": "user", "content": "Q"}], ITEMS, step="answer.test",
                                   prompt_template=TEMPLATE))
    assert again.read.text == "Oslo" and len(fixed.requests) == 1 and len(cache.values) == 1


def test_a_reply_that_runs_on_into_a_question_of_its_own_keeps_its_first_answer() -> None:
    # Gemma 3 270M imitating the worked example: an answer, then an invented question answered too
    reply = ("Reasoning: The observatory was founded by Ilse Brandt [1].\nAnswer: Ilse Brandt [1]\n"
             "Question: What was the purpose of the observatory?\nReasoning: It observed stars.\n"
             "Answer: To observe the stars [2]")
    read = read_answer(reply, ITEMS, TEMPLATE)
    assert (read.text, read.cited) == ("Ilse Brandt", ["p1"])
    assert answer_part("Question: Who?\nAnswer: Oslo [1]")[0] == "Oslo [1]"  # a question before any answer stays
