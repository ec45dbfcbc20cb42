"""An answer reply cut at the completion cap in its reasoning (a looping small model) is asked once for
its answer line, shown its reply without the loop (methods/cut_off.py, replies.ask_answer)."""

from __future__ import annotations

import asyncio

import pytest

from thinkgraph.config import LLMSettings
from thinkgraph.llm.backend import ChatRequest, ChatResult
from thinkgraph.llm.service import LLM
from thinkgraph.methods.cut_off import CUT_OFF_REPAIR, before_repetition
from thinkgraph.methods.replies import AskedAnswer, ask_answer
from thinkgraph.models import AnswerStatus

ITEMS = ["p1", "p2", "p3"]
TEMPLATE = "Answer the question using only the numbered passages below.\n{passages}\n{answer_format}"
LOOP = ("Reasoning: The runner-up is Eddie Irvine [1]. The game is mentioned in the passage about the race. "
        "The race is mentioned in the passage about the race. The race is mentioned in the passage about the "
        "race. The race is mentioned in the passage")


@pytest.mark.parametrize(("reply", "kept"), [
    (LOOP, "Reasoning: The runner-up is Eddie Irvine [1]. The game is mentioned in the passage about the race. "
           "The race is mentioned in the passage about the race."),
    ("Reasoning: A is a town.\nA was born in B.\nA was born in  b\nmore", "Reasoning: A is a town.\nA was born in B."),
    ("Reasoning: A founded B in 1990. B is in C, which", "Reasoning: A founded B in 1990. B is in C, which"),
    ("Reasoning: " + "The lens is named in the passage about the lens. " * 3 + "The lens",
     "Reasoning: The lens is named in the passage about the lens."),  # the first sentence loops, after its label
    ("The U.S. Army built it. The U.S. Navy ran it. It earned $1.5 million. The sequel earned $2.5 million.",
     "The U.S. Army built it. The U.S. Navy ran it. It earned $1.5 million. The sequel earned $2.5 million."),
    ("", ""),
])
def test_before_repetition_cuts_at_the_first_repeated_sentence(reply: str, kept: str) -> None:
    assert before_repetition(reply) == kept


class CappedOnce:
    """A server whose first reply loops to the cap (finish_reason "length"); the next is ``then``."""

    def __init__(self, first: str, then: str) -> None:
        self.replies = [ChatResult(text=first, finish_reason="length"), ChatResult(text=then)]
        self.requests: list[ChatRequest] = []

    async def chat(self, request: ChatRequest, on_delta: object = None) -> ChatResult:
        self.requests.append(request)
        return self.replies[min(len(self.requests), len(self.replies)) - 1]


def ask(backend: CappedOnce) -> tuple[AskedAnswer[str], LLM]:
    llm = LLM(backend, settings=LLMSettings(base_url="http://scripted", concurrency=1))
    asked = asyncio.run(ask_answer(llm, [{"role": "user", "content": "Q"}], ITEMS, step="answer.test",
                                   prompt_template=TEMPLATE))
    return asked, llm


def test_a_reply_cut_off_in_its_reasoning_is_asked_once_for_the_answer_line() -> None:
    backend = CappedOnce(LOOP, "Answer: Bizarre Creations [2]")
    asked, llm = ask(backend)
    assert asked.read.status == AnswerStatus.ANSWERED
    assert asked.read.text == "Bizarre Creations" and asked.read.cited == ["p2"]
    assert len(backend.requests) == 2 and llm.meter.repairs == 1
    repair = backend.requests[1].messages
    assert repair[-2] == {"role": "assistant", "content": before_repetition(LOOP)}
    assert repair[-1] == {"role": "user", "content": CUT_OFF_REPAIR}


def test_a_cut_off_reply_still_cut_off_after_the_repair_is_truncated() -> None:
    backend = CappedOnce(LOOP, LOOP)
    backend.replies[1] = ChatResult(text=LOOP, finish_reason="length")
    asked, _ = ask(backend)
    assert asked.read.status == AnswerStatus.TRUNCATED
    assert len(backend.requests) == 2  # asked once, not again


def test_a_repair_that_repeats_the_request_back_is_no_answer() -> None:
    """Gemma 270M answered the repair with its own text ("Your reply was cut off at the length limit
    ..."), which was printed as the answer: an echo of the request is unusable, as an echo of the prompt."""
    backend = CappedOnce(LOOP, CUT_OFF_REPAIR)
    asked, _ = ask(backend)
    assert asked.read.status == AnswerStatus.FAILED and asked.read.text is None


def test_a_reply_cut_off_on_its_bare_answer_label_is_asked_for_the_answer() -> None:
    backend = CappedOnce("Reasoning: A founded B in 1990 [1].\nAnswer:", "Answer: B [1]")
    asked, _ = ask(backend)
    assert asked.read.text == "B" and len(backend.requests) == 2


def test_an_empty_reply_cut_off_is_not_repaired_with_an_empty_turn() -> None:
    backend = CappedOnce("", "unused")
    asked, _ = ask(backend)
    assert asked.read.status == AnswerStatus.TRUNCATED and len(backend.requests) == 1


def test_a_reply_cut_off_after_its_answer_line_is_not_asked_again() -> None:
    backend = CappedOnce("Reasoning: A founded B [1].\nAnswer: The company founded in 1990 by the", "unused")
    asked, _ = ask(backend)
    assert asked.read.status == AnswerStatus.TRUNCATED
    assert len(backend.requests) == 1
