"""The one reader (``ppr``'s answer prompt, every method's final step) and the layout the verdicts share:
the reply read for its answer and citations; the question kept when a prompt is cut to fit."""

from __future__ import annotations

from thinkgraph.llm.backend import ChatRequest
from thinkgraph.llm.context import TRUNCATION_MARK, fit_messages
from thinkgraph.methods.layout import PREAMBLE, Notes, evidence_block, question_prompt
from thinkgraph.methods.reader import READER_INSTRUCTION
from thinkgraph.methods.synthesis import PATHS_TITLE
from thinkgraph.testing import ScriptedBackend
from thinkgraph.tokens import TokenCounter

QUESTION = "Where is the company that Alice Stone founded based?"
WORKED = ("Asks for: a place\nFacts: Alice Stone founded Acme Corp [{a}]. Acme Corp is based in Rivertown [{b}].\n"
          "Answer: Rivertown [{a}][{b}]")


def number_of(prompt: str, text: str) -> int:
    """The passage number [n] the prompt shows before ``text``."""
    line = next(ln for ln in prompt.splitlines() if text in ln and ln.startswith("["))
    return int(line[1:line.index("]")])


def worked_reply(request: ChatRequest) -> str:
    prompt = request.messages[-1]["content"]
    if "based in Rivertown" not in prompt or "Alice Stone founded Acme" not in prompt:
        return "Asks for: a place\nFacts: the passages do not say where.\nAnswer: Unknown"
    return WORKED.format(a=number_of(prompt, "Alice Stone founded Acme"), b=number_of(prompt, "based in Rivertown"))


def test_ppr_reads_through_the_one_reader_and_its_answer_line_is_the_answer(open_bridge) -> None:  # noqa: ANN001
    backend = ScriptedBackend(rules=[(READER_INSTRUCTION, worked_reply)])
    with open_bridge(backend) as tg:
        answer = tg.ask(QUESTION, method="ppr")
    prompt = backend.requests[0].messages[0]["content"]
    assert len(backend.requests[0].messages) == 1 and prompt.startswith(READER_INSTRUCTION)
    # the instruction, the entity paths, the passages, the answer format, the question last
    order = [prompt.index(PATHS_TITLE), prompt.index("Passages:\n[1]"), prompt.index("Reply in this form"),
             prompt.index(f"Question: {QUESTION}")]
    assert order == sorted(order) and prompt.endswith(f"Question: {QUESTION}")
    assert answer.status == "answered" and answer.text == "Rivertown"
    assert {c.quote for c in answer.citations} == {"Alice Stone founded Acme Corp in 1990.",
                                                    "Acme Corp is based in Rivertown."}
    step = next(s for s in answer.trace if s.prompt == "READER")
    assert "Facts:" in step.outputs["reasoning"]


def test_a_worked_reply_without_its_answer_line_is_not_read_as_the_kind_or_the_facts(open_bridge) -> None:  # noqa: ANN001
    backend = ScriptedBackend(rules=[(READER_INSTRUCTION, "Asks for: a place\nFacts: nothing links them.\nUnknown")])
    with open_bridge(backend) as tg:
        answer = tg.ask(QUESTION, method="ppr")
    assert answer.status == "abstained" and answer.text == "Unknown"


def test_a_prompt_cut_to_fit_keeps_its_question() -> None:
    counter = TokenCounter()
    evidence = evidence_block("\n\n".join(f"[{i}] " + "word " * 300 for i in range(1, 9)))
    messages = question_prompt(evidence, READER_INSTRUCTION, QUESTION)
    fitted, cut = fit_messages(messages, context_window=1200, max_tokens=200, counter=counter)
    assert cut and fitted[0]["content"].endswith(f"Question: {QUESTION}")
    assert fitted[0]["content"].count(TRUNCATION_MARK.strip()) == 1 and fitted[0]["content"].startswith(PREAMBLE)
    # a message whose last paragraph is most of it is cut at its end, as before
    long_tail = [{"role": "user", "content": "intro\n\n" + "word " * 2000}]
    fitted, cut = fit_messages(long_tail, context_window=600, max_tokens=100, counter=counter)
    assert cut and fitted[0]["content"].endswith(TRUNCATION_MARK)


def test_notes_render_only_when_they_hold_lines() -> None:
    block = evidence_block("[1] text", [Notes("Facts", ["a -> b -> c"]), Notes("Empty", [])])
    assert block == "Facts:\n- a -> b -> c\n\nPassages:\n[1] text"
    assert evidence_block("") == "Passages: (none)"
