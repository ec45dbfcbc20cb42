"""An answer's shape against its question (methods/answer_shape.py): the short answer inside a sentence
that restates the question, and the kind check that asks once again, through the scripted backend."""

from __future__ import annotations

import asyncio

import pytest

from support import scripted_llm
from thinkgraph.methods.answer_shape import kind_mismatch, restating_sentence, short_answer, unstated_number
from thinkgraph.methods.reader import ReaderInput, read
from thinkgraph.methods.replies import ask_answer
from thinkgraph.models import AnswerStatus, TraceStep
from thinkgraph.retrieval.evidence import ScoredPassage

ITEMS = ["p1", "p2", "p3"]
TEMPLATE = "Answer the question using only the numbered passages below.\n{passages}\n{answer_format}"
DURANT = "What river flows through the city Kevin Durant played for before Golden State?"


@pytest.mark.parametrize(("answer", "question", "short"), [
    ("The San Antonio River flows through the city Kevin Durant played for before Golden State.", DURANT,
     "The San Antonio River"),
    ("The river that flows through the city Kevin Durant played for before Golden State is the San Antonio River.",
     DURANT, "the San Antonio River"),
    ("Yes, both Christopher Nolan and Sathish Kalathil are film directors.",
     "Are Christopher Nolan and Sathish Kalathil both film directors?", "Yes"),
    ("No.", "Is Paris the capital of Spain?", "No"),
    ("San Antonio River", DURANT, "San Antonio River"),  # already short
    # a sentence naming an option and saying more is not cut (the cut would keep what follows "was")
    ("The Harbor Hill Observatory was founded first, in 1887, before the Skarn Lighthouse",
     "Which was founded first, the Harbor Hill Observatory or the Skarn Lighthouse?",
     "The Harbor Hill Observatory was founded first, in 1887, before the Skarn Lighthouse"),
    ("The Harbor Hill Observatory is older, founded in 1887",
     "Which is older, the Harbor Hill Observatory or the Skarn Lighthouse?",
     "The Harbor Hill Observatory is older, founded in 1887"),
    ("Rivertown is where the company that Alice Stone founded is based.",
     "Where is the company that Alice Stone founded based?", "Rivertown"),
    # what follows the copy says nothing new: the answer is before it
    ("Kestrel Bay, the company that Alice Stone founded is based there",
     "Where is the company that Alice Stone founded based?", "Kestrel Bay"),
    ("Kevin Durant played for the Thunder", DURANT, "Kevin Durant played for the Thunder"),  # 3 words copied
    # a choice the question offers is an answer, not a yes/no
    ("Yes, the older one", "Is Kevin Durant or LeBron James older?", "Yes, the older one"),
    # a yes/no answer to a question that is not yes/no stays whole
    ("No one flows through the city Kevin Durant played for before Golden State.", DURANT,
     "No one"),
    # a copied run that goes on a name is not a restatement
    ("The Governor and Company of the Bank of England", "What is the full name of the Bank of England?",
     "The Governor and Company of the Bank of England"),
    ("The Band of the Royal Marines", "Who performed at the opening of the Royal Marines museum?",
     "The Band of the Royal Marines"),
    ("Return of the King of the North", "Who is the King of the North?", "Return of the King of the North"),
    # a question inside a yes/no form is answered by what follows the yes
    ("Yes, William Shakespeare", "Do you know who wrote Hamlet?", "Yes, William Shakespeare"),
    # what is left is tidied: a bracket, a restated tail after a comma, a second copula
    ("Paris (the capital of the country where Alice was born)",
     "What is the capital of the country where Alice was born?", "Paris"),
    ("2008, the year the film directed by Nolan was released.", "In what year was the film directed by Nolan released?",
     "2008"),
    ("The year the film directed by Nolan was released is 2008", "In what year was the film directed by Nolan "
     "released?", "2008"),
    # two sentences: a long answer keeps what it says
    ("The Rio Grande. The San Antonio River flows through the city Kevin Durant played for before Golden State.",
     DURANT, "The Rio Grande. The San Antonio River flows through the city Kevin Durant played for before "
     "Golden State."),
    ("The San Antonio River", None, "The San Antonio River"),
    # the one option of "..., A or B?" an answer names, when it says nothing else new
    ("The Pterocarya is larger.", "Which plant is larger, the Pterocarya or the Cotula?", "Pterocarya"),
    ("Albert Einstein was born first", "Who was born first, Albert Einstein or Isaac Newton?", "Albert Einstein"),
    ("Pterocarya, which grows to 30 m", "Which plant is larger, the Pterocarya or the Cotula?",
     "Pterocarya, which grows to 30 m"),  # says more: kept whole
    ("The Pterocarya or the Cotula", "Which plant is larger, the Pterocarya or the Cotula?",
     "The Pterocarya or the Cotula"),  # names both: no pick
    # both named, compared in the asking clause's words: the sentence's subject
    ("The Pterocarya is larger than the Cotula", "Which plant is larger, the Pterocarya or the Cotula?",
     "Pterocarya"),
    ("Queen has more members than The Who", "Which band has more members, The Who or Queen?", "Queen"),
    ("The Pterocarya is not larger than the Cotula", "Which plant is larger, the Pterocarya or the Cotula?",
     "The Pterocarya is not larger than the Cotula"),  # negated: no pick
    ("The Cotula is smaller than the Pterocarya", "Which plant is larger, the Pterocarya or the Cotula?",
     "The Cotula is smaller than the Pterocarya"),  # in other words than the question's: no pick
    ("The Pterocarya is larger than the Cotula in leaves", "Which plant is larger, the Pterocarya or the Cotula?",
     "The Pterocarya is larger than the Cotula in leaves"),  # says more after: no pick
    ("2,000 is more", "Which is more, 1,000 or 2,000?", "2,000"),  # a number's comma is no clause break
    ("The Who has more members.", "Which band has more members, The Who or Queen?", "The Who"),  # a name's article
    # a comma inside an option makes the options unclear: the rest of the answer is new, no pick
    ("Paris, Texas is larger.", "Which city is larger, Paris, Texas or Austin?", "Paris, Texas is larger."),
    # but a name's suffix after its comma ("Jr.") is part of the option, given as the question writes it
    ("Sammy Davis Jr.", "Who was born first, Sammy Davis, Jr. or Frank Sinatra?", "Sammy Davis, Jr."),
    # a negated question: a sentence naming one option may say it is the other
    ("The Pterocarya is a plant.", "Which is not a plant, the Pterocarya or the Cotula?", "The Pterocarya is a plant."),
    ("Tom was born in Paris.", "Which of them wasn't born in Paris, Tom or Ann?", "Tom was born in Paris."),
])
def test_short_answer(answer: str, question: str | None, short: str) -> None:
    assert short_answer(answer, question) == short


@pytest.mark.parametrize(("answer", "question", "wanted"), [
    ("1975", "Where did the band form that made the live album Maiden Japan?", True),
    ("in 1846", "Who was president when the area became part of the US?", True),
    ("4 July 1776", "In which city was the declaration signed?", True),
    ("Leyton, East London", "Where did the band form that made the live album Maiden Japan?", False),
    ("Route 66", "Where does the road run?", False),
    ("Apollo 11", "Who landed on the Moon first?", False),
    ("The 1975", "Who performed Chocolate?", False),  # a band named by a year
    ("36", "Which of the two tornado outbreaks killed the most people?", True),  # one of two things, not a count
    ("12", "Which one of the bands had more members?", True),
    ("2008", "Which of the two elections had the higher turnout?", False),  # a year names events
    ("1066", "Which of the two is older?", False),  # no things named
    ("1989", "Which of the two albums was released first, 1989 or Reputation?", False),  # an option it offers
    ("1066", "Which of the two years saw the battle?", False),  # the things are years
    ("1990s", "Which of the three decades had more hits?", False),
    ("1998", "Which One Direction member was born in 1993?", False),  # no "which of the ..."
    ("March 2 and 3, 2012", "Which of the two tornado outbreaks killed the most people?", False),  # a date-name
    ("1998", "Which year came first?", False),  # (a quantity question: a year is its answer)
    # a time or a count has too many forms to refuse by a word list: never checked
    ("Mississippi", "When did the state where Pocahontas Mounds is located become part of the US?", False),
    ("Tuesday", "On what day was it signed?", False),
    ("1975", None, False),
])
def test_kind_mismatch(answer: str, question: str | None, wanted: bool) -> None:
    found = kind_mismatch(answer, question)
    assert (found is not None) is wanted
    if wanted:
        assert found is not None and found.startswith("the person, place or thing")


CENSUS = "At the 2011 census, what was the population of the city where the painter was born?"


@pytest.mark.parametrize(("answer", "question", "wanted"), [
    # a name with no number, for a count, a year, a population, an age, a share: the bridge, one hop short
    ("Young, New South Wales", CENSUS, True),
    ("Paris", "How many people live in the city?", True),
    ("the Beatles", "In what year did the band that recorded Help! break up?", True),
    ("Rivertown", "What percentage of the county voted for the mayor of Rivertown?", True),
    ("Acme Corp", "What was the number of employees of the company Alice Stone founded?", True),
    # a number in digits or words is of the kind asked (whether it is right is another check)
    ("6,960", CENSUS, False),
    ("about 7,000 people", CENSUS, False),
    ("twelve", "How many studio albums did the band release?", False),
    ("a dozen", "How many studio albums did the band release?", False),
    ("several", "How many books did she write?", False),
    ("most of it", "How much of the land is forest?", False),
    ("1970", "In what year did the band that recorded Help! break up?", False),
    ("the 19th century", "Which year did the war end?", False),
    # not asking for a number: a rank in a name, a possessive, an age, a length or a stage in words
    ("Thriller", "What was the number one album of 1983?", False),
    ("Adela Morrow", "Which year's winner founded the prize?", False),
    ("in his forties", "How old was he when the band formed?", False),
    ("a decade", "How long did the war last?", False),
    ("the semifinals", "How far did the team advance?", False),
    # not a quantity question: a name stands
    ("Young, New South Wales", "Where was the painter born?", False),
    ("Tuesday", "When was the treaty signed?", False),  # "when" has too many forms: never checked
    ("Paris", "Which of the two cities, and in what year?", True),  # the quantity check still asks for the year
])
def test_kind_mismatch_for_a_quantity(answer: str, question: str, wanted: bool) -> None:
    found = kind_mismatch(answer, question)
    assert (found is not None) is wanted
    if wanted:
        assert found is not None and found.startswith("the number it asks for")


_llm = scripted_llm


def test_a_name_for_a_quantity_question_is_asked_again_once_and_the_number_stands() -> None:
    llm, backend = _llm("Reasoning: The painter was born in Young, New South Wales [1].\nAnswer: Young, New South "
                        "Wales [1]",
                        "Reasoning: The painter was born in Young [1], whose population was 6,960 in 2011 [2].\n"
                        "Answer: 6,960 [2]")
    asked = asyncio.run(ask_answer(llm, [{"role": "user", "content": "Q: Young had 6,960 people."}], ITEMS,
                                   step="answer.test", prompt_template=TEMPLATE, question=CENSUS))
    assert (asked.read.status, asked.read.text, asked.read.cited) == (AnswerStatus.ANSWERED, "6,960", ["p2"])
    assert len(backend.requests) == 2 and llm.meter.repairs == 1
    assert '"Young, New South Wales" is not the number it asks for' in backend.requests[1].messages[2]["content"]


def test_an_answer_of_the_wrong_kind_is_asked_again_once_and_the_second_reply_stands() -> None:
    question = "Where did the band form that made the live album Maiden Japan?"
    llm, backend = _llm("Reasoning: The band formed in 1975 [2].\nAnswer: 1975 [2]",
                        "Reasoning: Iron Maiden formed in Leyton [1].\nAnswer: Leyton, East London [1]")
    asked = asyncio.run(ask_answer(llm, [{"role": "user", "content": "Q"}], ITEMS, step="answer.test",
                                   prompt_template=TEMPLATE, question=question))
    assert (asked.read.status, asked.read.text, asked.read.cited) == (AnswerStatus.ANSWERED, "Leyton, East London",
                                                                     ["p1"])
    assert len(backend.requests) == 2 and llm.meter.repairs == 1
    repair = backend.requests[1].messages
    assert repair[1] == {"role": "assistant", "content": "Reasoning: The band formed in 1975 [2].\nAnswer: 1975 [2]"}
    assert '"1975" is not the person, place or thing it asks for' in repair[2]["content"]
    assert repair[2]["content"].endswith(question)  # the question last


HAYMO = "What language were books being translated into during the era of Haymo of Faversham?"


@pytest.mark.parametrize(("answer", "question", "restating"), [
    ("The books were being translated into several languages during the era of Haymo of Faversham, including "
     "Latin", HAYMO, True),
    ("The Bubye River is a tributary of the Limpopo River in the country where the Bubye River flows",
     "What is the name of the waterfall in the country where the Bubye River flows?", True),
    ("Latin", HAYMO, False),  # short
    ("Latin, the language of the scholars of Paris", HAYMO, False),  # long, but copies no run of the question
    ("books being translated into Latin", HAYMO, False),  # a copied run, but a few words
    # an explanation is a sentence, and may well repeat the question's words
    ("Because the books were being translated into Latin during the era of Haymo of Faversham",
     "Why were books being translated into Latin during the era of Haymo of Faversham?", False),
    ("The books were being translated into Latin during the era of Haymo of Faversham by hand",
     "How were books being translated into Latin during the era of Haymo of Faversham?", False),
    ("The books were being translated into Latin during the era of Haymo of Faversham in numbers",
     "How many books were being translated into Latin during the era of Haymo of Faversham?", True),
    ("The books were being translated", None, False),
    # an answer that opens with words of its own answers first
    ("Jurassic Park and Schindler's List, both made by the director of Jaws in 1993",
     "What film did the director of Jaws make in 1993?", False),
    # a yes/no question's answer is read as yes or no (short_answer), never asked for "the words that answer"
    ("Christopher Nolan and Sathish Kalathil are both film directors of India",
     "Are Christopher Nolan and Sathish Kalathil both film directors?", False),
])
def test_restating_sentence(answer: str, question: str | None, restating: bool) -> None:
    assert restating_sentence(answer, question) is restating


def test_the_copied_run_is_found_in_time_on_a_looping_reply() -> None:
    """A reply that loops on one word, against a question of that word: the run is still the longest (the
    first MAX_RUN_WORDS words read), found row by row, not by trying every pair of starts."""
    from thinkgraph.methods.answer_shape import MAX_RUN_WORDS, _copied_run

    question = "What is " + "the " * 900 + "name?"
    reply = "the " * 5000
    assert _copied_run(reply, question) == (0, len("the " * MAX_RUN_WORDS) - 1)
    assert _copied_run("a b c the name is X", "What is the name of it?") == (0, 0)  # two words: no run
    assert _copied_run("so the name of it is X", "What is the name of it?") == (3, 17)


def test_a_long_sentence_around_the_question_is_asked_again_once_for_the_words_that_answer() -> None:
    first = ("Reasoning: Haymo taught in Paris [1], where Aristotle was translated into Latin [2].\nAnswer: The books "
             "were being translated into several languages during the era of Haymo of Faversham, including Latin [2]")
    llm, backend = _llm(first, "Reasoning: The translations were into Latin [2].\nAnswer: Latin [2]")
    asked = asyncio.run(ask_answer(llm, [{"role": "user", "content": "Q"}], ITEMS, step="answer.test",
                                   prompt_template=TEMPLATE, question=HAYMO))
    assert (asked.read.status, asked.read.text, asked.read.cited) == (AnswerStatus.ANSWERED, "Latin", ["p2"])
    assert len(backend.requests) == 2 and llm.meter.repairs == 1
    repair = backend.requests[1].messages[2]["content"]
    assert "is a whole sentence that repeats the question" in repair and repair.endswith(HAYMO)
    again, backend = _llm(first.replace("[2]", "[1]"), first)  # still a sentence: the second reply stands
    asked = asyncio.run(ask_answer(again, [{"role": "user", "content": "Q"}], ITEMS, step="answer.test",
                                   prompt_template=TEMPLATE, question=HAYMO))
    assert asked.read.text is not None and asked.read.text.endswith("including Latin") and len(backend.requests) == 2


def test_a_second_answer_of_the_wrong_kind_stands_bounded_to_one_repair() -> None:
    llm, backend = _llm("Answer: 1975 [2]", "Answer: 1975 [3]")
    asked = asyncio.run(ask_answer(llm, [{"role": "user", "content": "Q"}], ITEMS, step="answer.test",
                                   prompt_template=TEMPLATE, question="Where did the band form?"))
    assert (asked.read.text, asked.read.cited) == ("1975", ["p3"]) and len(backend.requests) == 2


def test_an_answer_of_the_right_kind_costs_no_repair_and_a_restating_sentence_is_cut() -> None:
    llm, backend = _llm("Reasoning: Durant played for the Spurs... [1]\nAnswer: The San Antonio River flows through "
                        "the city Kevin Durant played for before Golden State. [1]")
    asked = asyncio.run(ask_answer(llm, [{"role": "user", "content": "Q"}], ITEMS, step="answer.test",
                                   prompt_template=TEMPLATE, question=DURANT))
    assert (asked.read.text, asked.read.cited) == ("The San Antonio River", ["p1"])
    assert len(backend.requests) == 1 and llm.meter.repairs == 0
    assert "flows through the city" in asked.replies[0]  # the reply as written stays in the trace


def test_the_one_reader_checks_the_kind() -> None:
    passages = [ScoredPassage("c1", "d1", "Maiden Japan", "Maiden Japan is a live EP by Iron Maiden.", 1.0),
                ScoredPassage("c2", "d2", "Iron Maiden", "Iron Maiden formed in Leyton, East London, in 1975.", 0.9)]
    llm, backend = _llm("Answer: 1975 [2]", "Reasoning: Maiden Japan is by Iron Maiden [1], formed in Leyton [2]."
                        "\nAnswer: Leyton, East London [2]")
    trace: list[TraceStep] = []
    asked, _ = asyncio.run(read(llm, ReaderInput("Where did the band form that made the live album Maiden Japan?",
                                                 passages), step="ppr.answer", trace=trace))
    assert asked.read.text == "Leyton, East London" and [p.chunk_id for p in asked.read.cited] == ["c2"]
    assert len(backend.requests) == 2 and trace[-1].outputs["first_reply"] == "Answer: 1975 [2]"


@pytest.mark.parametrize(("answer", "shown", "unstated"), [
    ("30,457", "Young had a population of 6,960 at the 2011 census.", "30,457"),
    ("6960", "Young had a population of 6,960 at the 2011 census.", None),  # separators aside
    ("6,960 people", "Young had a population of 6960.", None),
    ("12 years", "He was born in 1901 and died in 1913.", None),  # worked out: too short to be read
    ("in the 1990s", "The band formed in 1990 in Leeds.", None),
    ("Stephen King", "Maximum Overdrive (1986) was directed by Stephen King.", None),
    ("1.25 million", "About 1.2 million people live there.", "1.25"),
    ("1986", "", "1986"),
])
def test_a_number_the_answer_states_is_read_from_what_was_shown(answer: str, shown: str, unstated: str | None) -> None:
    assert unstated_number(answer, shown) == unstated


def test_an_answer_with_a_number_nothing_shown_states_is_asked_again_once() -> None:
    question = "At the 2011 census, what was the population of the town where Kerry Saxby-Junna was born?"
    shown = "[1] Kerry Saxby-Junna was born in Young. [2] Young had a population of 6,960 at the 2011 census."
    llm, backend = _llm("Reasoning: She was born in Young [1].\nAnswer: 30,457 [1]",
                        "Reasoning: She was born in Young [1], which had 6,960 people [2].\nAnswer: 6,960 [2]")
    asked = asyncio.run(ask_answer(llm, [{"role": "user", "content": shown + "\n" + question}], ITEMS,
                                   step="answer.test", prompt_template=TEMPLATE, question=question))
    assert asked.read.text == "6,960" and len(backend.requests) == 2 and llm.meter.repairs == 1
    repair = backend.requests[1].messages[2]["content"]
    assert "states 30,457, a number that nothing above states" in repair and repair.endswith(question)
    stated, backend = _llm("Answer: 6,960 [2]")
    asyncio.run(ask_answer(stated, [{"role": "user", "content": shown + "\n" + question}], ITEMS,
                           step="answer.test", prompt_template=TEMPLATE, question=question))
    assert len(backend.requests) == 1  # a number the passages state costs no repair


def test_a_number_the_question_states_is_no_made_up_number() -> None:
    question = "At the 2011 census, what was the population of Young?"
    assert unstated_number("6,960 (2011)", "[1] Young had 6,960 people." + "\n" + question) is None
    assert unstated_number("6,960 (2011)", "[1] Young had 6,960 people.") == "2011"


def test_an_answer_is_stated_when_what_was_shown_holds_each_of_its_words() -> None:
    from thinkgraph.methods.answer_shape import stated_in

    seen = ["The most related node is ent:1 (entity: Acme Corp).", "It joined the Union on December 10, 1817.",
            "Jiménez: a town of 6960 people."]
    assert stated_in("Acme Corp", seen) and stated_in("acme corp.", seen)
    assert stated_in("Dec. 10, 1817", seen)  # a word may start a shown one
    assert stated_in("Jimenez", seen) and stated_in("JIMÉNEZ", seen)  # accents and case aside
    assert stated_in("6,960", seen) and stated_in("3 years", ["Its war lasted years: 1990-1993."])  # numbers: elsewhere
    assert not stated_in("Acme Inc", seen) and not stated_in("Paris", [])
    assert stated_in("Yes", []) and stated_in("no", []) and stated_in("", [])
