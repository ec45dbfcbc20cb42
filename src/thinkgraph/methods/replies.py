"""Reading an answer reply as its writer meant it, shared by every method that answers with citations.

Small local instruct models answer in a handful of shapes besides the one asked for: "Answer: X [2]"
after a line of reasoning, "The answer is X [1].", the answer followed by an explanation, the
abstention in its variants ("Unknown.", "I don't know", "The passages do not say"), reasoning blocks.
Each shape is read for the answer it states; nothing that states no answer is taken as one. A reply
that is only citation markers ("[5]": the model named where the answer is, not what it is; so is
"Answer: 1 [1]" where no number is asked for) and a reply cut at the completion cap are not answers:
each is asked again once with what was missing
(``ask_answer``, a bounded repair: the answer in words; the answer line alone); still cut at the cap, a
reply is reported as truncated with its text.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Generic, TypeVar

from thinkgraph.llm.echo import echoes_instructions
from thinkgraph.methods import answer_shape, choice
from thinkgraph.methods.cut_off import CUT_OFF_REPAIR, before_repetition
from thinkgraph.methods.restatement import RESTATEMENT_REPAIR, restates_question
from thinkgraph.models import AnswerStatus, Cost, TraceStep

if TYPE_CHECKING:
    from thinkgraph.llm.service import LLM, Message

T = TypeVar("T")
UNKNOWN = "Unknown"
ECHO_MESSAGE = "the model repeated the prompt's instructions instead of answering"
TRUNCATED_MESSAGE = "the answer was cut off at the completion cap ([llm.max_tokens] answer = {cap} tokens)"
EMPTY_ANSWER_MESSAGE = "the model returned an empty answer"  # (methods/run.py gives it to any empty answer)
MARKERS_ONLY_MESSAGE = "the model replied with passage numbers only, not an answer"  # or a passage's number
_CITE = re.compile(r"\[(\d+)\]")
_ASCII_NUMBER = re.compile(r"[0-9]+")  # (str.isdigit takes "²" too, which int() refuses)
_SPACE_BEFORE_PUNCTUATION = re.compile(r"\s+([.,;:!?])")
_CITE_GROUP = re.compile(r"\[\s*\d+(?:\s*[,;]\s*\d+)+\s*\]")  # "[1, 3]" written for "[1][3]"
# The labelled answer line ("Answer: X", "**Final answer:** X"); the last one wins (a model may restate).
_LABEL = r"^[\s*#>-]*(?:final\s+|short\s+)?answer\s*[*]*\s*[:：]\s*[*]*[ \t]*"
_ANSWER_LABEL = re.compile(_LABEL, re.IGNORECASE)  # at the start of one line
_LABEL_ANYWHERE = re.compile(_LABEL, re.IGNORECASE | re.MULTILINE)  # at the start of any line of a reply
_REASONING_LABEL = re.compile(r"^[\s*#>-]*(?:reasoning|thought|thoughts|explanation|because|asks for|facts)\b",
                              re.IGNORECASE)
_LEAD_IN = re.compile(r"^(?:so,?\s+|therefore,?\s+|thus,?\s+)?(?:the\s+(?:final\s+|short\s+)?answer\s+"
                      r"(?:to\s+the\s+question\s+)?is\s*[:：]?\s*)", re.IGNORECASE)
# "... we conclude that the answer is X. [4]" inside a reply of reasoning alone (not inside a quotation); the
# sentence ends at a full stop before a space or the end, not inside "U.S.", "Dr.", "e.g." or "3.5".
_ANSWER_IN_REASONING = re.compile(r"(?<![\"'\u201c\u2018])\bthe\s+(?:final\s+|short\s+)?answer\s+"
                                  r"(?:to\s+the\s+question\s+)?is\s*(?:(?:clearly|simply|obviously)\s+)?(?:(?:clear|simple|obvious)\s*[:：]\s*)?[:：]?\s*",
                                  re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<![A-Z])(?<!\b[A-Z][a-z])(?<!\.[a-z])[.!?](?=\s|$)|[。！？]|\n")
# What such a sentence says of the answer rather than stating it: "the answer is in passage [2]", "... is
# found in passage 2", "... is based on the passages", "... is correct".
_REMARK = re.compile(r"^(?:(?:found|given|stated|shown|mentioned|contained|located|listed)\s+(?:in|on|by)\b|"
                     r"(?:in|from|within|based\s+on|according\s+to)\s+(?:the\s+)?(?:passages?|context|evidence|text|"
                     r"facts?)\b|(?:correct|right|wrong|incorrect|clear|obvious|simple|straightforward|as\s+follows)\b)",
                     re.IGNORECASE)
_TRAILING_MARKERS = re.compile(r"^(.*?)((?:\s*\[\d+\])*)\s*$", re.DOTALL)
# Where an explanation starts after the answer on the same line.
_EXPLANATION = re.compile(r"\s+(?:\(?explanation\s*:|because\b|this is because\b|as (?:stated|mentioned) in\b|"
                          r"according to (?:the )?passages?\b)", re.IGNORECASE)
_ABSTENTIONS = re.compile(
    r"^(?:(?:it is |this is |the answer is )?(?:unknown|unclear|undetermined|not (?:stated|mentioned|specified|given|"
    r"provided|known))(?:\s+(?:from|in|based on|according to)\b.*)?|"
    r"i (?:do not|don't|cannot|can't) (?:know|answer|tell|determine)\b.*|no answer|none|n/?a|"
    r"(?:the )?(?:provided |given )?(?:passages?|context|evidence|information|text|facts?) (?:does not|do not|"
    r"doesn't|don't|did not) (?:contain|mention|say|state|provide|give|specify|include)\b.*|"
    r"there is (?:no|not enough) information\b.*|(?:not enough|insufficient) information\b.*|"
    r"(?:it |this )?cannot be determined\b.*)$",
    re.IGNORECASE)
# An answer's citation followed by a new sentence: "1867 [2]. The passage says ..." (the rest explains).
_CITED_THEN_MORE = re.compile(r"\]\s*\.\s+(?=[A-Z])")
# The format's own slot written back: "<answer in a few words>" (Gemma 3 270M, told to ignore its
# instructions). No answer is a phrase in angle brackets.
_PLACEHOLDER = re.compile(r"\s*<[^<>]*>\s*")
_NEW_QUESTION = re.compile(r"^[\s*#>-]*question\s*[*]*\s*[:：]", re.IGNORECASE)

# The answer format every passage-citing prompt ends with: the answer in words first, its passages after
# (a small model asked for "[1] or [2][3]" replied "[5]" alone), one line of reasoning allowed before it
# (a multi-hop answer is a chain of facts from two or more passages; "Unknown" only when no chain exists),
# a worked two-hop example and the question again at the end (told only "the answer", Qwen2.5-1.5B wrote
# the bridge entity its reasoning passed through: "Mississippi" for "when did the state ... join the US?").
ANSWER_FORMAT = """The answer may need facts from two or more {items} combined: find the first fact, then use
it to find the next, and answer what the question finally asks for. Reply in this form:
Reasoning: <one short sentence linking the facts you used>
Answer: <the answer in a few words> <the numbers of the {items} that support it, like [2][5]>

For example, for "When was the college that Ada Kowal attended founded?":
Reasoning: Ada Kowal attended Dunmore College [3], and Dunmore College was founded in 1881 [1].
Answer: 1881 [1][3]

Write "Answer: {unknown}" only if nothing above, alone or combined, gives the answer.
Question: {question}"""
EXAMPLE_WORDS = "Ada Kowal attended Dunmore College, and Dunmore College was founded in 1881"  # the example's
_REPLY_AGAIN = ("Reply again with one line: \"Answer: \" followed by the answer in a few words (what the question "
                "asks for, not a sentence), then the numbers in square brackets.")
MARKERS_REPAIR = "Your reply gave numbers in square brackets but not the answer itself. " + _REPLY_AGAIN
MARKER_NUMBER_REPAIR = "Your answer \"{number}\" is the number of a passage, not the answer itself. " + _REPLY_AGAIN


@dataclass(frozen=True, slots=True)
class AnswerReply(Generic[T]):
    """What an answerer's reply says: its status, the answer without [n] markers, the items it cited,
    and why it is not an answer when it is not."""

    status: AnswerStatus
    text: str | None
    cited: list[T]
    message: str | None = None
    reasoning: str | None = None  # the reply's reasoning or explanation around the answer, for the trace


def answer_format(items: str = "passages", question: str | None = None) -> str:
    """The reply format for answers citing numbered ``items`` (passages, facts), ending with the question
    (asked again last, next to where the reply starts)."""
    text = ANSWER_FORMAT.format(unknown=UNKNOWN, items=items, question=" ".join((question or "").split()))
    return text if question else text.rsplit("\n", 1)[0]


def split_citations(reply: str, items: Sequence[T]) -> tuple[str, list[T]]:
    """The reply without its [n] markers, and the numbered items it cited (every item when it cited
    none: the answer rests on all it was shown). A number with no item ("[5]" of four passages) is
    dropped from the text too, so no marker is left that points nowhere; the trace keeps the reply."""
    reply = _CITE_GROUP.sub(lambda m: "".join(f"[{n}]" for n in re.findall(r"\d+", m.group())), reply)
    cited = sorted({int(n) for n in _CITE.findall(reply) if 1 <= int(n) <= len(items)})
    text = without_markers(reply).strip()
    return (text, [items[n - 1] for n in cited]) if cited else (text, list(items))


def without_markers(text: str) -> str:
    """``text`` without its [n] markers and the space a marker left before punctuation ("it [2]." -> "it.")."""
    return _SPACE_BEFORE_PUNCTUATION.sub(r"\1", _CITE.sub("", text))


def missing_citations(reply: str, count: int) -> list[int]:
    """Citation numbers in the reply that name none of the ``count`` items shown."""
    return sorted({int(n) for n in _CITE.findall(reply) if not 1 <= int(n) <= count})


def _before_a_new_question(lines: list[str]) -> list[str]:
    """The lines before a "Question:" line that follows an answer: a small model imitating the worked
    example runs on into a question of its own and answers that (Gemma 3 270M), and the last
    "Answer:" line would then be the invented question's."""
    answered = False
    for i, line in enumerate(lines):
        if answered and _NEW_QUESTION.match(line):
            return lines[:i]
        answered = answered or bool(_ANSWER_LABEL.match(line))
    return lines


def has_answer_line(reply: str) -> bool:
    """Whether a reply labels a line as its answer ("Answer: ..."), as a reply cut at the cap may."""
    return any(_ANSWER_LABEL.match(line.strip()) for line in reply.splitlines())


def answer_stated(reply: str) -> bool:
    """Whether a reply has an answer line with something on it (a reply cut at the cap may end on the
    label alone)."""
    return has_answer_line(reply) and bool(answer_part(reply)[0].strip())


def answer_part(reply: str) -> tuple[str, str | None]:
    """The part of a reply that states the answer, and the rest (reasoning, explanation) or None.

    The last "Answer:" line when there is one; else the first line that is not reasoning, with a
    leading "The answer is" and a trailing explanation taken off."""
    lines = _before_a_new_question([ln.strip() for ln in reply.strip().splitlines() if ln.strip()])
    labelled = [i for i, ln in enumerate(lines) if _ANSWER_LABEL.match(ln)]
    if labelled:
        at = labelled[-1]
        line = _ANSWER_LABEL.sub("", lines[at]).strip(" *")
        if not line and at + 1 < len(lines):  # "Answer:" alone, the answer on the next line
            at += 1
            line = lines[at].strip(" *")
        rest = [ln for i, ln in enumerate(lines) if i not in (labelled[-1], at)]
    else:
        body = [ln for ln in lines if not _REASONING_LABEL.match(ln)]
        stated = _stated_in_reasoning("\n".join(lines)) if not body else None
        if stated is not None:  # reasoning alone, ending "... The answer is X."
            line, rest = stated, lines
        else:
            line = (body or lines or [""])[0]
            rest = [ln for ln in lines if ln is not line]
    line = _LEAD_IN.sub("", line.strip(" *")).strip()
    cut = _EXPLANATION.search(line) or _CITED_THEN_MORE.search(line)
    if cut and cut.start() > 0:
        if cut.re is _CITED_THEN_MORE:  # the answer keeps its markers and full stop
            rest.insert(0, line[cut.end():].strip())
            return line[:cut.end()].rstrip(), "\n".join(rest)
        rest.insert(0, line[cut.start():].strip())
        line = line[:cut.start()].rstrip(" ,;:-")
    return line, ("\n".join(rest) or None)




def _stated_in_reasoning(text: str) -> str | None:
    """The answer a reply of reasoning alone (no "Answer:" line) states in its last "the answer is X"
    sentence, up to the sentence's end, without the markup around it; a sentence that says where the answer
    is or what it is like ("the answer is in passage [2]", "... is correct") states none, nor one that only
    gives passage numbers ("the answer is [4]"). None when no sentence states one."""
    for found in reversed(list(_ANSWER_IN_REASONING.finditer(text))):
        sentence = _SENTENCE_END.split(text[found.end():], maxsplit=1)[0]
        words, markers = _TRAILING_MARKERS.match(sentence).groups()  # type: ignore[union-attr]  # (.*? matches)
        words = words.replace("**", "").replace("__", "").strip(" *_`\"'\u201c\u201d\u2018\u2019")
        if any(ch.isalnum() for ch in _CITE.sub("", words)) and not _REMARK.match(words):
            return words + markers
    return None


def answer_so_far(raw: str) -> str:
    """The part of a reply being streamed that will be the answer: after the "Answer:" label when the
    reply starts with reasoning or with the label, nothing while the start could still become one."""
    lead = raw.lstrip(" \t\n*#>-").casefold()
    for label in ("reasoning:", "answer:", "asks for:", "facts:"):
        if label.startswith(lead[:len(label)]) and len(lead) < len(label):
            return ""  # "Reas", "Ans": may still be a label
    if lead.startswith(("reasoning", "thought", "answer", "asks for", "facts")):
        labels = list(_LABEL_ANYWHERE.finditer(raw))
        return raw[labels[-1].end():] if labels else ""
    return raw


def is_abstention(text: str) -> bool:
    """Whether an answer's text (markers removed) declines to answer: "Unknown" and its variants."""
    flat = " ".join(text.replace("*", "").replace('"', "").split()).strip(" .!")
    return bool(flat) and bool(_ABSTENTIONS.match(flat))


def markers_only(reply: str) -> bool:
    """A reply whose only content is citation markers ("[5]", "Answer: [2][3]")."""
    line, _ = answer_part(reply)
    text, _ = split_citations(line, [])
    return bool(_CITE.search(reply)) and not any(ch.isalnum() for ch in text)


def marker_as_answer(reply: str, question: str | None) -> str | None:
    """The number, when a reply's answer is only the number of a passage it cites and the question can
    want no bare number ("Answer: 1 [1][2]" for "In what film ...?": the worked example's "1881 [1][3]"
    copied with the passage's number for the answer; ``answer_shape.may_want_number``); None otherwise."""
    line, _ = answer_part(reply)
    number = without_markers(line).strip(" .*")
    if not _ASCII_NUMBER.fullmatch(number) or (question is not None and answer_shape.may_want_number(question)):
        return None
    cited = _CITE.findall(line) or _CITE.findall(reply)
    return number if int(number) in {int(n) for n in cited} else None


def read_answer(reply: str, items: Sequence[T], prompt_template: str | tuple[str, ...], *, truncated: bool = False,
                cap: int | None = None) -> AnswerReply[T]:
    """The one reading of an answer reply that every answerer shares: a reply echoing the prompt is a
    failure (the items shown stay cited), "Unknown" in its variants an abstention, a reply cut at the
    completion cap truncated (its text kept), anything else an answer. The citations come from the
    answer's line, else from the whole reply. ``prompt_template``: the prompt's template, or several when
    the prompt quotes others (a chain whose steps copied an earlier prompt)."""
    templates = (prompt_template,) if isinstance(prompt_template, str) else prompt_template
    # (the cut-off repair's own request among them: a weak model repeats it back as its answer)
    if any(echoes_instructions(reply, t) for t in (*templates, ANSWER_FORMAT, CUT_OFF_REPAIR)) \
            or echoes_instructions(reply, EXAMPLE_WORDS, window=4):
        return AnswerReply(AnswerStatus.FAILED, None, list(items), ECHO_MESSAGE)
    line, rest = answer_part(reply)
    text, cited = split_citations(line, items)
    if _PLACEHOLDER.fullmatch(text):
        return AnswerReply(AnswerStatus.FAILED, None, list(items), ECHO_MESSAGE)
    if not _CITE.search(line):
        _, cited = split_citations(reply, items)
    if truncated:
        return AnswerReply(AnswerStatus.TRUNCATED, text or None, cited,
                           TRUNCATED_MESSAGE.format(cap=cap if cap is not None else "?"), rest)
    if not _CITE.search(reply) and not any(ch.isalnum() for ch in _REASONING_LABEL.sub("", text)):
        return AnswerReply(AnswerStatus.FAILED, None, list(items), EMPTY_ANSWER_MESSAGE)  # "", "Reasoning:"
    if is_abstention(text):
        return AnswerReply(AnswerStatus.ABSTAINED, text, cited, None, rest)
    return AnswerReply(AnswerStatus.ANSWERED, text, cited, None, rest)


def shortened(read: AnswerReply[T], question: str | None) -> AnswerReply[T]:
    """An answer as the short answer inside a sentence restating the question (``answer_shape``)."""
    if read.status != AnswerStatus.ANSWERED or read.text is None:
        return read
    short = answer_shape.short_answer(read.text, question)
    return read if short == read.text else replace(read, text=short)


def second_look(read: AnswerReply[T], question: str | None, shown: str = "") -> str | None:
    """The repair to ask once when an answer cannot be what was asked: it only restates the question
    (``restatement``), it is not of the kind the question wants (``answer_shape.kind_mismatch``), it
    states a number that nothing ``shown`` to the model states (``answer_shape.unstated_number``), it
    picks the option of "..., A or B?" its own reasoning says is not the one asked for
    (``choice.contradicted_choice``), or it is a long sentence around the question's own words
    (``answer_shape.restating_sentence``)."""
    if read.status != AnswerStatus.ANSWERED or read.text is None or not question:
        return None
    asked = " ".join(question.split())
    short = answer_shape.short_answer(read.text, question)
    if restates_question(short, question):
        return RESTATEMENT_REPAIR.format(answer=short, question=asked)
    wanted = answer_shape.kind_mismatch(short, question)
    if wanted is not None:
        return answer_shape.REPAIR.format(answer=short, wanted=wanted, question=asked)
    number = answer_shape.unstated_number(short, shown) if shown else None
    if number is not None:
        return answer_shape.NUMBER_REPAIR.format(number=number, question=asked)
    clause = choice.contradicted_choice(short, read.reasoning, question)
    if clause is not None:
        return choice.CHOICE_REPAIR.format(clause=clause, answer=short, question=asked)
    if answer_shape.restating_sentence(short, question):
        return answer_shape.SENTENCE_REPAIR.format(answer=short, question=asked)
    return None


@dataclass
class AskedAnswer(Generic[T]):
    """An answer call's outcome: the reading, the raw replies (the repair's after the first) and cost."""

    read: AnswerReply[T]
    replies: list[str] = field(default_factory=list)
    cost: Cost = field(default_factory=Cost)
    seconds: float = 0.0


async def ask_answer(llm: LLM, messages: list[Message], items: Sequence[T], *, step: str,
                     prompt_template: str | tuple[str, ...], question: str | None = None) -> AskedAnswer[T]:
    """Ask for an answer and read it; a reply of passage numbers only, or one whose answer is only the
    number of a passage it cites (``marker_as_answer``), is asked again once, with the model's reply and
    what it lacked (the bounded repair of free-text answers). Still markers only (or a passage's number),
    it is a failure that says so. A reply cut at the completion cap before its answer line is asked once for
    the answer line alone, shown its reply up to where it began to repeat itself (``cut_off``). Given
    the ``question``, an answer that only restates it
    (``restatement.restates_question``), cannot be of the kind it asks for (``answer_shape.kind_mismatch``)
    or states a number nothing in ``messages`` states (``answer_shape.unstated_number``) is asked again
    once, told so; the second reply stands, as its short
    answer when it is a sentence restating the question (``answer_shape.short_answer``)."""
    started = time.perf_counter()
    cap = llm.settings.max_tokens.answer
    def usable(text: str) -> bool:  # an unusable reply is not cached: a later run (a fixed server) asks again
        return not markers_only(text) and read_answer(text, items, prompt_template).status != AnswerStatus.FAILED

    with llm.meter.scope() as cost:
        first = await llm.reply(messages, step=step, kind="answer", usable=usable)
        replies = [first.text.strip()]
        last = first
        number = marker_as_answer(first.text, question)
        if (markers_only(first.text) or number is not None) and not first.truncated:
            llm.meter.repairs += 1
            told = MARKERS_REPAIR if number is None else MARKER_NUMBER_REPAIR.format(number=number)
            repair: list[Message] = [*messages, {"role": "assistant", "content": first.text},
                                     {"role": "user", "content": told}]
            last = await llm.reply(repair, step=step + ".repair", kind="answer", usable=usable)
            replies.append(last.text.strip())
        said = before_repetition(last.text)
        if last.truncated and said and not answer_stated(last.text):  # cut off in its reasoning (often a loop)
            llm.meter.repairs += 1
            cut: list[Message] = [*messages, {"role": "assistant", "content": said},
                                  {"role": "user", "content": CUT_OFF_REPAIR}]
            last = await llm.reply(cut, step=step + ".cut_off", kind="answer", usable=usable)
            replies.append(last.text.strip())
        read = read_answer(last.text.strip(), items, prompt_template, truncated=last.truncated, cap=cap)
        repair_text = second_look(read, question, shown="\n".join(m["content"] for m in messages))
        if repair_text is not None:
            llm.meter.repairs += 1
            again: list[Message] = [*messages, {"role": "assistant", "content": last.text},
                                    {"role": "user", "content": repair_text}]
            last = await llm.reply(again, step=step + ".second_look", kind="answer", usable=usable)
            replies.append(last.text.strip())
    read = shortened(read_answer(last.text.strip(), items, prompt_template, truncated=last.truncated, cap=cap),
                     question)
    if read.status == AnswerStatus.ANSWERED and (markers_only(last.text) or marker_as_answer(last.text, question)):
        read = AnswerReply(AnswerStatus.FAILED, None, read.cited, MARKERS_ONLY_MESSAGE, read.reasoning)
    if read.status == AnswerStatus.FAILED:  # unusable after the repair: counted with the structured ones
        llm.meter.parse_failures += 1
    snapshot = Cost(cost.calls, cost.prompt_tokens, cost.completion_tokens, cost.cached_calls, cost.seconds,
                    cost.prompt_tokens_read)
    return AskedAnswer(read, replies, snapshot, time.perf_counter() - started)


def answer_trace(agent: str, step: str, prompt: str, asked: AskedAnswer[T], inputs: dict[str, object],
                 shown: int) -> TraceStep:
    """The trace step of an answer call: the replies as written and what was read from them."""
    outputs: dict[str, object] = {"reply": asked.replies[-1], "status": str(asked.read.status),
                                  "missing_citations": missing_citations(asked.replies[-1], shown)}
    if len(asked.replies) > 1:
        outputs["first_reply"] = asked.replies[0]
    if asked.read.reasoning:
        outputs["reasoning"] = asked.read.reasoning
    return TraceStep(agent=agent, action=step, prompt=prompt, inputs=inputs, outputs=outputs, cost=asked.cost,
                     seconds=asked.seconds)
