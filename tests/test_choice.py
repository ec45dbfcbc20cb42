"""A reply whose reasoning gives the asked property to one option of "..., A or B?" and whose answer names
the other (methods/choice.py), and sub-questions that pose the question's own choice."""

from __future__ import annotations

import asyncio

import pytest

from support import scripted_llm
from thinkgraph.methods.choice import contradicted_choice, reasoned_option, same_choice
from thinkgraph.methods.replies import ask_answer
from thinkgraph.models import AnswerStatus

SINGER = "Which singer is American, Mark King or Nick Hexum?"
TEMPLATE = "Answer the question using only the numbered passages below.\n{passages}\n{answer_format}"


@pytest.mark.parametrize(("reasoning", "question", "option"), [
    ("Reasoning: Mark King is an English musician [1], while Nick Hexum is an American singer, songwriter, and "
     "rapper [2].", SINGER, "Nick Hexum"),
    ("Reasoning: Nick Hexum is an American singer-songwriter [2]. Mark King is English [1].", SINGER, "Nick Hexum"),
    ("Mark King is an American singer; Nick Hexum is a drummer.", SINGER, "Mark King"),  # no label needed
    # nothing read: both options in one clause (a comparison), the asked words missing, a negation
    ("Reasoning: Sid Haig is older than Vic Darchinyan [4][5].", "Who is the oldest, Sid Haig or Vic Darchinyan?",
     None),
    ("Reasoning: The Pterocarya is a tree, while the Cotula is a genus of flowering plants.",
     "Which plant is larger, the Pterocarya or the Cotula?", None),
    ("Reasoning: Mark King is not an American singer, while Nick Hexum is a drummer.", SINGER, None),
    # both options said to be it: no one option
    ("Reasoning: Mark King is an American singer, while Nick Hexum is an American singer too.", SINGER, None),
    # a negated question is not read ("which is not ..."), nor one without two options
    ("Reasoning: Mark King is an American singer.", "Which singer is not American, Mark King or Nick Hexum?", None),
    ("Reasoning: Mark King is an American singer.", "Which singer is American?", None),
])
def test_reasoned_option(reasoning: str, question: str, option: str | None) -> None:
    found = reasoned_option(reasoning, question)
    assert (found[0] if found else None) == option
    if found:
        assert option is not None and option in found[1] and "[" not in found[1]  # the clause, without its citations


def test_contradicted_choice_only_when_the_answer_names_the_other_option() -> None:
    reasoning = "Reasoning: Mark King is an English musician, while Nick Hexum is an American singer [2]."
    assert contradicted_choice("Mark King", reasoning, SINGER) == "Nick Hexum is an American singer"
    assert contradicted_choice("Nick Hexum", reasoning, SINGER) is None
    assert contradicted_choice("Mark King and Nick Hexum", reasoning, SINGER) is None  # not one option
    assert contradicted_choice("Level 42", reasoning, SINGER) is None
    assert contradicted_choice("Mark King", None, SINGER) is None


@pytest.mark.parametrize(("sub_query", "same"), [
    ("Who is American, Mark King or Nick Hexum?", True),
    ("Which of them is an American singer, nick hexum or mark king?", True),  # either order, any case
    ("Is Mark King American?", False),
    ("Which singer is American, Mark King or Sting?", False),
])
def test_same_choice(sub_query: str, same: bool) -> None:
    assert same_choice(sub_query, SINGER) is same


def test_an_answer_against_its_own_reasoning_is_asked_again_once_shown_the_clause() -> None:
    first = ("Reasoning: Mark King is an English musician [1], while Nick Hexum is an American singer [2].\n"
             "Answer: Mark King [1]")
    llm, backend = scripted_llm(first, "Reasoning: Nick Hexum is an American singer [2].\nAnswer: Nick Hexum [2]")
    asked = asyncio.run(ask_answer(llm, [{"role": "user", "content": "Q"}], ["p1", "p2"], step="answer.test",
                                   prompt_template=TEMPLATE, question=SINGER))
    assert (asked.read.status, asked.read.text, asked.read.cited) == (AnswerStatus.ANSWERED, "Nick Hexum", ["p2"])
    assert len(backend.requests) == 2 and llm.meter.repairs == 1
    repair = backend.requests[1].messages[2]["content"]
    assert '"Nick Hexum is an American singer"' in repair and '"Mark King"' in repair and repair.endswith(SINGER)
    # bounded: the second reply stands even when it contradicts its reasoning again
    again, backend = scripted_llm(first, first)
    asked = asyncio.run(ask_answer(again, [{"role": "user", "content": "Q"}], ["p1", "p2"], step="answer.test",
                                   prompt_template=TEMPLATE, question=SINGER))
    assert asked.read.text == "Mark King" and len(backend.requests) == 2


def test_an_answer_that_follows_its_reasoning_costs_no_repair() -> None:
    llm, backend = scripted_llm("Reasoning: Nick Hexum is an American singer [2].\nAnswer: Nick Hexum [2]")
    asked = asyncio.run(ask_answer(llm, [{"role": "user", "content": "Q"}], ["p1", "p2"], step="answer.test",
                                   prompt_template=TEMPLATE, question=SINGER))
    assert asked.read.text == "Nick Hexum" and len(backend.requests) == 1 and llm.meter.repairs == 0


def test_the_choice_replies_benchmark_counts_cached_replies(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    import json
    import sqlite3
    import sys

    from support import load_benchmark

    bench = load_benchmark("choice_replies")
    (tmp_path / "hotpotqa").mkdir()
    (tmp_path / "hotpotqa" / "questions_dev.jsonl").write_text(
        json.dumps({"question": SINGER}) + "\n" + json.dumps({"question": "Who wrote Brand?"}) + "\n")
    index = tmp_path / "index.db"
    with sqlite3.connect(index) as db:
        db.execute("CREATE TABLE llm_cache (key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL NOT NULL)")
        for n, reply in enumerate([
                "Reasoning: Mark King is English, while Nick Hexum is an American singer [2].\nAnswer: Mark King",
                "Reasoning: Mark King is a bassist, and Nick Hexum is an American singer [2].\nAnswer: Nick Hexum [2]",
                "Reasoning: Both sing.\nAnswer: Mark King or Nick Hexum",
                "Reasoning: Ibsen wrote it.\nAnswer: Henrik Ibsen", "{\"verdict\": \"yes\"}"]):
            db.execute("INSERT INTO llm_cache VALUES (?, ?, 0)", (str(n), json.dumps(reply)))
    sys.argv = ["choice_replies.py", "--data", str(tmp_path), str(index), str(index)]  # twice: counted once
    bench.main()
    out = capsys.readouterr().out
    assert "1 questions offer two options; 3 distinct cached replies name both options of one: 1 agree with " \
           "their reasoning, 1 contradict it (asked again), 1 not read" in out
