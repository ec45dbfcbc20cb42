"""A reply whose reasoning gives the asked property to one option of "..., A or B?" and whose answer names
the other (methods/choice.py), and sub-questions that pose the question's own choice."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from contextlib import closing
from pathlib import Path

import pytest

from support import load_benchmark, scripted_llm
from thinkgraph.methods.choice import contradicted_choice, offered, reasoned_option, same_choice
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
    ("Reasoning: yes, Mark King is an American singer.", "Is Mark King an American singer, yes or no?", None),
    # what the question asks before its options is all of it, commas and all
    ("Mark King is an English singer. Nick Hexum is American, born in 1970.",
     "Which singer, born in 1970, is American, Mark King or Nick Hexum?", None),
    # the asked words in a tail, a question, a claim taken back, a conditional: nothing read
    ("Mark King is a British singer who toured American cities.", SINGER, None),
    ("Mark King, an English singer, became popular with American audiences. Nick Hexum is from Wisconsin.",
     SINGER, None),
    ("Is Mark King an American singer? Nick Hexum is.", SINGER, None),
    ("Mark King is an American singer. Wait, that is wrong: Mark King is English. So Nick Hexum.", SINGER, None),
    ("Mark King would be the American singer if he were born in Ohio, but he was born on the Isle of Wight.",
     SINGER, None),
    # the option's own name says nothing of it: "bank" is Bank of America's name
    ("Bank of America is older than most banks. Wells Fargo is a bank founded in 1852.",
     "Which bank is older, Bank of America or Wells Fargo?", None),
    ("The Who is a British band, while The Band is Canadian-American.", "Which band is British, The Who or The Band?",
     "The Who"),
    # a line break ends a clause
    ("Reasoning: Mark King is English\nNick Hexum is an American singer [2]", SINGER, "Nick Hexum"),
    # the option must be what the clause is about: its subject, followed by a form of "be"
    ("So, Nick Hexum is the American singer.", SINGER, "Nick Hexum"),
    ("An American singer praised Nick Hexum.", SINGER, None),
    ("Nick Hexum admires an American singer.", SINGER, None),
    ("Nick Hexum's mother is an American singer.", SINGER, None),
    ("Someone older trained Ilse Brandt.", "Who is older, Adela Morrow or Ilse Brandt?", None),
    # denials is_negated leaves alone
    ("Nick Hexum is hardly an American singer.", SINGER, None),
    ("Nick Hexum is a non-American singer.", SINGER, None),
    ("It is false that Nick Hexum is an American singer.", SINGER, None),
    ("Nick Hexum is an American singer, said nobody.", SINGER, None),
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
    assert contradicted_choice("Not Mark King", reasoning, SINGER) is None  # a negated answer agrees
    assert contradicted_choice("Mark King is not American", reasoning, SINGER) is None


@pytest.mark.parametrize(("question", "options"), [
    ("Which is bigger, Washington, D.C. or Paris?", ("Washington, D.C.", "Paris")),
    ("Who was born first, Sammy Davis, Jr. or Dean Martin?", ("Sammy Davis, Jr.", "Dean Martin")),
    ("Which singer, born in 1970, is American, Mark King or Nick Hexum?", ("Mark King", "Nick Hexum")),
])
def test_an_option_with_a_comma_in_its_name_is_one_option(question: str, options: tuple[str, str]) -> None:
    found = offered(question)
    assert found is not None and found[1] == options
    # an answer and a reasoning that agree: "Washington" is not a clause about "D.C."
    assert contradicted_choice("Washington, D.C.", "Washington is bigger than Paris.", question) is None


@pytest.mark.parametrize(("sub_query", "same"), [
    ("Who is American, Mark King or Nick Hexum?", True),
    ("Which of them is an American singer, nick hexum or mark king?", True),  # either order, any case
    ("Is Mark King American?", False),
    ("Which singer is American, Mark King or Sting?", False),
    ("Which singer is not American, Mark King or Nick Hexum?", False),  # the opposite question
    ("When were they born, Mark King or Nick Hexum?", False),  # something else of the same two
])
def test_same_choice(sub_query: str, same: bool) -> None:
    assert same_choice(sub_query, SINGER) is same
    assert not same_choice("Is Mark King British, yes or no?", "Is Nick Hexum American, yes or no?")


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


def test_the_choice_replies_benchmark_counts_cached_replies(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    bench = load_benchmark("choice_replies")
    (tmp_path / "hotpotqa").mkdir()
    (tmp_path / "hotpotqa" / "questions_dev.jsonl").write_text(
        json.dumps({"question": SINGER}) + "\n{bad\n" + json.dumps({"question": "Who wrote Brand?"}) + "\n")
    index = tmp_path / "a#b" / "index.db"  # a '#' in the path is a file name's, not a URI fragment
    index.parent.mkdir()
    with closing(sqlite3.connect(index)) as db, db:
        db.execute("CREATE TABLE llm_cache (key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL NOT NULL)")
        for n, reply in enumerate([
                "Reasoning: Mark King is English, while Nick Hexum is an American singer [2].\nAnswer: Mark King",
                "Reasoning: Mark King is a bassist, and Nick Hexum is an American singer [2].\nAnswer: Nick Hexum [2]",
                "Reasoning: Mark King is a bassist, and Nick Hexum is an American singer [2].\nAnswer: Level 42",
                "Reasoning: Mark King and Nick Hexum both sing.\nAnswer: Nick Hexum",
                "Reasoning: Ibsen wrote it.\nAnswer: Henrik Ibsen", "{\"verdict\": \"yes\"}"]):
            db.execute("INSERT INTO llm_cache VALUES (?, ?, 0)", (str(n), json.dumps(reply)))
    monkeypatch.setattr(sys, "argv", ["choice_replies.py", "--data", str(tmp_path), str(index), str(index)])
    bench.main()  # the same index twice: each reply counted once
    assert "1 questions offer two options; 4 distinct cached replies name both options of one: 1 agree with " \
           "their reasoning, 1 contradict it (asked again), 1 name no one option, 1 not read" in capsys.readouterr().out


@pytest.mark.parametrize("bad", ["missing", "empty", "not-a-db"])
def test_the_choice_replies_benchmark_refuses_a_bad_index_in_one_line(tmp_path: Path, bad: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    bench = load_benchmark("choice_replies")
    (tmp_path / "d" / "hotpotqa").mkdir(parents=True)
    (tmp_path / "d" / "hotpotqa" / "questions_dev.jsonl").write_text(json.dumps({"question": SINGER}) + "\n")
    index = tmp_path / "index.db"
    if bad == "empty":
        index.write_bytes(b"")
    elif bad == "not-a-db":
        index.write_text("not a database, " * 100)
    monkeypatch.setattr(sys, "argv", ["choice_replies.py", "--data", str(tmp_path / "d"), str(index)])
    with pytest.raises(SystemExit) as stop:
        bench.main()
    assert str(index) in str(stop.value.code) and "\n" not in str(stop.value.code)


def test_the_choice_replies_benchmark_refuses_a_data_folder_without_questions(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    bench = load_benchmark("choice_replies")
    monkeypatch.setattr(sys, "argv", ["choice_replies.py", "--data", str(tmp_path), str(tmp_path / "index.db")])
    with pytest.raises(SystemExit) as stop:
        bench.main()
    assert stop.value.code == 2
