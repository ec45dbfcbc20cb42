"""Triple-Check is shown the draft's claim apart from its reasoning, after the evidence it is checked
against: a small verifier shown the whole reply as "the answer" judged the reasoning or the question."""

from __future__ import annotations

import json

from thinkgraph.llm.backend import ChatRequest
from thinkgraph.llm.service import LLM
from thinkgraph.methods.a2rag.verify import Verifier, claim_of
from thinkgraph.testing import ScriptedBackend

DRAFT = "Reasoning: Pocahontas Mounds is in Mississippi [1]; Mississippi joined in 1817 [2].\nAnswer: 1817 [2]"
EVIDENCE = "Facts:\n(none)\n\nPassages:\n[1] Pocahontas Mounds is in Mississippi.\n[2] Mississippi joined in 1817."


def test_the_claim_and_its_reasoning_are_read_apart() -> None:
    assert claim_of(DRAFT) == ("1817 [2]", "Pocahontas Mounds is in Mississippi [1]; Mississippi joined in 1817 [2].")
    assert claim_of("1817 [2]") == ("1817 [2]", "(not given)")


async def _prompts(joint: bool) -> list[str]:
    seen: list[str] = []

    def reply(request: ChatRequest) -> str:
        seen.append(request.messages[0]["content"])
        return json.dumps({"relevant": True, "grounded": True, "resolves": True, "reason": "ok", "pass": True})

    verifier = Verifier(LLM(ScriptedBackend(rules=[("", reply)])), joint=joint)
    failure, _ = await verifier.triple_check("When did the state join?", DRAFT, EVIDENCE, [])
    assert failure is None
    return seen


async def test_the_joint_check_shows_evidence_then_the_claim() -> None:
    (prompt,) = await _prompts(joint=True)
    assert prompt.index("Mississippi joined in 1817.") < prompt.index("Proposed answer: 1817 [2]")
    assert "How it was reached: Pocahontas Mounds is in Mississippi" in prompt
    assert "Answer: 1817" not in prompt.replace("Proposed answer: 1817", "")  # the reply is not pasted whole


async def test_the_separate_grounding_check_sees_the_question_and_the_claim() -> None:
    prompts = await _prompts(joint=False)
    grounding = next(p for p in prompts if "Is every claim in the answer supported" in p)
    assert "Question: When did the state join?" in grounding
    assert grounding.index("Passages:") < grounding.index("Proposed answer: 1817 [2]")
