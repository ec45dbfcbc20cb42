"""The controller's verdicts: Triple-Check (eqs. 2-5) as one structured verdict or as three, and the
stage-wise sufficiency verdict of the "llm" sufficiency mode. An unusable verdict is a failed check
(never a crash): verified-or-abstain stays intact."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from thinkgraph.errors import LLMUnavailableError, StructuredOutputError
from thinkgraph.llm.service import LLM
from thinkgraph.methods.a2rag.prompts import (
    CHECK_ADEQUACY,
    CHECK_GROUNDING,
    CHECK_RELEVANCE,
    SUFFICIENCY,
    TRIPLE_CHECK,
)
from thinkgraph.models import TraceStep

CHECKS = ("rel", "grd", "ans")
SUFFICIENCY_STEP = "a2rag.sufficiency"
TRIPLE_CHECK_STEP = "a2rag.check"


class CheckVerdict(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    passed: bool = Field(alias="pass")  # "pass" is a Python keyword; the JSON keeps the prompt's name
    reason: str = ""


class TripleVerdict(BaseModel):
    relevant: bool
    grounded: bool
    resolves: bool
    reason: str = ""

    def first_failure(self) -> str | None:
        return next((c for c, ok in zip(CHECKS, (self.relevant, self.grounded, self.resolves), strict=True)
                     if not ok), None)


class SufficiencyVerdict(BaseModel):
    sufficient: bool
    missing: str = ""


@dataclass
class Verifier:
    llm: LLM
    joint: bool  # one verdict for the three checks (triple_check="joint")
    unusable: int = 0  # verdicts that stayed unusable after the LLM layer's repairs

    async def triple_check(self, query: str, reply: str, evidence: str,
                           trace: list[TraceStep]) -> tuple[str | None, str]:
        """Relevance, grounding, adequacy; the first failed check is the failure type (None: passed)."""
        if self.joint:
            return await self._joint(query, reply, evidence, trace)
        prompts = {"rel": CHECK_RELEVANCE.format(question=query, evidence=evidence),
                   "grd": CHECK_GROUNDING.format(answer=reply, evidence=evidence),
                   "ans": CHECK_ADEQUACY.format(question=query, answer=reply)}
        for check in CHECKS:
            try:
                verdict = await self.llm.json([{"role": "user", "content": prompts[check]}], CheckVerdict,
                                              step=f"{TRIPLE_CHECK_STEP}.{check}", kind="verdict")
            except StructuredOutputError as exc:
                verdict = CheckVerdict(passed=False, reason=f"the verifier's verdict was unusable ({exc})")
                self.unusable += 1
            trace.append(TraceStep("verifier", f"check.{check}", {}, {"pass": verdict.passed,
                                                                      "reason": verdict.reason}))
            if not verdict.passed:
                return check, verdict.reason
        return None, ""

    async def _joint(self, query: str, reply: str, evidence: str, trace: list[TraceStep]) -> tuple[str | None, str]:
        prompt = TRIPLE_CHECK.format(question=query, answer=reply, evidence=evidence)
        try:
            verdict = await self.llm.json([{"role": "user", "content": prompt}], TripleVerdict,
                                          step=TRIPLE_CHECK_STEP, kind="verdict")
        except StructuredOutputError as exc:  # unusable: the first check fails, as in the separate form
            verdict = TripleVerdict(relevant=False, grounded=False, resolves=False,
                                    reason=f"the verifier's verdict was unusable ({exc})")
            self.unusable += 1
        except LLMUnavailableError:
            raise
        failure = verdict.first_failure()
        trace.append(TraceStep("verifier", "check", {}, {"rel": verdict.relevant, "grd": verdict.grounded,
                                                         "ans": verdict.resolves, "failure": failure,
                                                         "reason": verdict.reason}))
        return failure, verdict.reason if failure else ""

    async def sufficient(self, query: str, evidence: str, stage: str, trace: list[TraceStep]) -> bool:
        """The separate stage-wise sufficiency verdict (sufficiency="llm"); unsure escalates."""
        try:
            verdict = await self.llm.json([{"role": "user", "content": SUFFICIENCY.format(
                question=query, evidence=evidence)}], SufficiencyVerdict, step=SUFFICIENCY_STEP, kind="verdict")
        except StructuredOutputError:
            return False  # unsure: escalate (the failure is counted by the LLM layer)
        trace.append(TraceStep("retriever", f"sufficiency.{stage}", {},
                               {"sufficient": verdict.sufficient, "missing": verdict.missing}))
        return verdict.sufficient
