"""An answer that only restates its question is asked again once, told why (methods/restatement.py),
through the scripted backend; choices the question offers, yes/no and real answers are left alone."""

from __future__ import annotations

import asyncio

import pytest

from support import scripted_llm
from thinkgraph.methods.reader import ReaderInput, read
from thinkgraph.methods.replies import ask_answer
from thinkgraph.methods.restatement import restates_question
from thinkgraph.models import AnswerStatus, TraceStep
from thinkgraph.retrieval.evidence import ScoredPassage

ITEMS = ["p1", "p2", "p3"]
TEMPLATE = "Answer the question using only the numbered passages below.\n{passages}\n{answer_format}"


@pytest.mark.parametrize(("answer", "question", "restates"), [
    ("Lilu", "If Gallu is a demon Lilu is what?", True),
    ("Barry Wesson's team played in the World Series last year. [1]",
     "Who did Barry Wesson's team play in the World Series last year?", True),  # "played": "play"
    ("Plane", "What kind of plane dropped the bomb on Akinoshu Kenji's birthplace?", True),
    ("a spirit", "If Gallu is a demon Lilu is what?", False),
    ("Los Angeles Dodgers [2]", "Who did Barry Wesson's team play in the World Series last year?", False),
    ("Kevin Durant", "Who is older, Kevin Durant or LeBron James?", False),  # the choice it offers
    ("Christopher Nolan", "Between Christopher Nolan and Sam Raimi, who was born first?", False),
    ("Yes", "Are Christopher Nolan and Sathish Kalathil both film directors?", False),
    ("No", "Is Paris the capital of Spain?", False),
    ("", "What is it?", False),
    ("1817", None, False),  # no question given: nothing to compare
])
def test_restates_question(answer: str, question: str | None, restates: bool) -> None:
    assert restates_question(answer, question) is restates


_llm = scripted_llm


def test_a_restating_answer_is_asked_again_once_and_the_second_reply_stands() -> None:
    question = "If Gallu is a demon Lilu is what?"
    llm, backend = _llm("Reasoning: Lilu is named [1].\nAnswer: Lilu [1]", "Answer: a spirit [2]")
    asked = asyncio.run(ask_answer(llm, [{"role": "user", "content": "Q"}], ITEMS, step="answer.test",
                                   prompt_template=TEMPLATE, question=question))
    assert (asked.read.status, asked.read.text, asked.read.cited) == (AnswerStatus.ANSWERED, "a spirit", ["p2"])
    assert len(backend.requests) == 2 and llm.meter.repairs == 1
    repair = backend.requests[1].messages
    assert repair[1]["role"] == "assistant" and "Answer: Lilu" in repair[1]["content"]
    assert '"Lilu" only repeats words of the question' in repair[2]["content"]
    assert repair[2]["content"].endswith(question)  # the question last


def test_a_second_restatement_stands_bounded_to_one_repair() -> None:
    llm, backend = _llm("Answer: Lilu [1]", "Answer: Lilu is a demon [1]")
    asked = asyncio.run(ask_answer(llm, [{"role": "user", "content": "Q"}], ITEMS, step="answer.test",
                                   prompt_template=TEMPLATE, question="If Gallu is a demon Lilu is what?"))
    assert asked.read.text == "Lilu is a demon" and len(backend.requests) == 2


@pytest.mark.parametrize("question", [None, "Who is older, Lilu or Gallu?"])
def test_no_question_or_a_choice_costs_no_repair(question: str | None) -> None:
    llm, backend = _llm("Answer: Lilu [1]")
    asked = asyncio.run(ask_answer(llm, [{"role": "user", "content": "Q"}], ITEMS, step="answer.test",
                                   prompt_template=TEMPLATE, question=question))
    assert asked.read.text == "Lilu" and len(backend.requests) == 1 and llm.meter.repairs == 0


def test_an_abstention_is_not_a_restatement() -> None:
    llm, backend = _llm("Answer: Unknown")
    asked = asyncio.run(ask_answer(llm, [{"role": "user", "content": "Q"}], ITEMS, step="answer.test",
                                   prompt_template=TEMPLATE, question="What is Unknown?"))
    assert asked.read.status == AnswerStatus.ABSTAINED and len(backend.requests) == 1


def test_the_one_reader_repairs_a_restatement() -> None:
    passages = [ScoredPassage("c1", "d1", "Lilu", "Lilu is a spirit of Mesopotamian lore.", 1.0)]
    llm, backend = _llm("Answer: Lilu [1]", "Reasoning: Lilu is a spirit [1].\nAnswer: a spirit [1]")
    trace: list[TraceStep] = []
    asked, shown = asyncio.run(read(llm, ReaderInput("If Gallu is a demon Lilu is what?", passages),
                                    step="ppr.answer", trace=trace))
    assert asked.read.text == "a spirit" and [p.chunk_id for p in asked.read.cited] == ["c1"]
    assert len(backend.requests) == 2
