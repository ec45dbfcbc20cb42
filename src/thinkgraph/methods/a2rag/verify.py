"""The controller's verdicts: Triple-Check (eqs. 2-5) as one structured verdict or as three, and the
stage-wise sufficiency verdict of the "llm" sufficiency mode. An unusable verdict is a failed check
(never a crash): verified-or-abstain stays intact."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field

from thinkgraph.errors import LLMUnavailableError, StructuredOutputError
from thinkgraph.llm.judgement import REASON_CHARS, YesNo, YesNoVerdict, decide, judged
from thinkgraph.llm.service import LLM
from thinkgraph.methods.a2rag.prompts import (
    CHECK_ADEQUACY,
    CHECK_GROUNDING,
    CHECK_RELEVANCE,
    SUFFICIENCY,
    TRIPLE_CHECK,
)
from thinkgraph.methods.layout import question_prompt
from thinkgraph.models import TraceStep

CHECKS = ("rel", "grd", "ans")
SUFFICIENCY_STEP = "a2rag.sufficiency"
TRIPLE_CHECK_STEP = "a2rag.check"


class TripleVerdict(BaseModel):
    """The joint Triple-Check: the reason first, then the three verdicts in the paper's order."""

    reason: str = Field(max_length=REASON_CHARS)  # required: see llm/judgement.YesNoVerdict
    relevant: YesNo
    grounded: YesNo
    resolves: YesNo


class SufficiencyVerdict(BaseModel):
    missing: str = Field(max_length=REASON_CHARS)
    verdict: YesNo


JOINT_KEYS = ("relevant", "grounded", "resolves")  # in the order of CHECKS


@dataclass
class Verifier:
    """Triple-Check and the stage-wise sufficiency, each verdict read as P(yes) against its threshold
    where the server gives log-probabilities (``check_threshold``, ``sufficiency_threshold``)."""

    llm: LLM
    joint: bool  # one verdict for the three checks (triple_check="joint")
    check_threshold: float = 0.5
    sufficiency_threshold: float = 0.5
    unusable: int = 0  # verdicts that stayed unusable after the LLM layer's repairs

    async def triple_check(self, query: str, answer: str, evidence: str,
                           trace: list[TraceStep]) -> tuple[str | None, str]:
        """Relevance, grounding, adequacy of the parsed ``answer`` against ``evidence`` (the passages it
        cites); the first failed check is the failure type (None: passed)."""
        if self.joint:
            return await self._joint(query, answer, evidence, trace)
        instructions = {"rel": CHECK_RELEVANCE, "grd": CHECK_GROUNDING.format(answer=answer),
                        "ans": CHECK_ADEQUACY.format(answer=answer)}
        for check in CHECKS:
            messages = question_prompt(evidence, instructions[check], query)
            with self.llm.meter.scope() as cost:
                try:
                    verdict, p_yes = await self.llm.judge(messages, YesNoVerdict, keys=("verdict",),
                                                          step=f"{TRIPLE_CHECK_STEP}.{check}")
                    judgement = judged(verdict, p_yes, "verdict", self.check_threshold, verdict.reason)
                except StructuredOutputError as exc:
                    judgement = decide(False, None, self.check_threshold,
                                       f"the verifier's verdict was unusable ({exc})")
                    self.unusable += 1
            trace.append(TraceStep("verifier", f"check.{check}", {}, {"pass": judgement.passed, **judgement.trace()},
                                   cost=cost))
            if not judgement.passed:
                return check, judgement.reason
        return None, ""

    async def _joint(self, query: str, answer: str, evidence: str, trace: list[TraceStep]) -> tuple[str | None, str]:
        messages = question_prompt(evidence, TRIPLE_CHECK.format(answer=answer), query)
        with self.llm.meter.scope() as cost:
            try:
                verdict, p_yes = await self.llm.judge(messages, TripleVerdict, keys=JOINT_KEYS,
                                                      step=TRIPLE_CHECK_STEP)
            except StructuredOutputError as exc:  # unusable: the first check fails, as in the separate form
                self.unusable += 1
                reason = f"the verifier's verdict was unusable ({exc})"
                trace.append(TraceStep("verifier", "check", {}, {"failure": "rel", "reason": reason}, cost=cost))
                return "rel", reason
            except LLMUnavailableError:
                raise
        judgements = {key: judged(verdict, p_yes, key, self.check_threshold, verdict.reason) for key in JOINT_KEYS}
        failure = next((c for c, key in zip(CHECKS, JOINT_KEYS, strict=True) if not judgements[key].passed), None)
        trace.append(TraceStep("verifier", "check", {}, {
            **{c: judgements[key].passed for c, key in zip(CHECKS, JOINT_KEYS, strict=True)},
            "p_yes": {c: judgements[key].p_yes for c, key in zip(CHECKS, JOINT_KEYS, strict=True)},
            "written": {c: getattr(verdict, key) for c, key in zip(CHECKS, JOINT_KEYS, strict=True)},
            "threshold": self.check_threshold, "failure": failure, "reason": verdict.reason}, cost=cost))
        return failure, verdict.reason if failure else ""

    async def sufficient(self, query: str, evidence: str, stage: str, trace: list[TraceStep]) -> bool:
        """The separate stage-wise sufficiency verdict (sufficiency="llm"); unsure escalates."""
        messages = question_prompt(evidence, SUFFICIENCY, query)
        with self.llm.meter.scope() as cost:
            try:
                verdict, p_yes = await self.llm.judge(messages, SufficiencyVerdict, keys=("verdict",),
                                                      step=SUFFICIENCY_STEP)
            except StructuredOutputError:
                return False  # unsure: escalate (the failure is counted by the LLM layer)
        judgement = judged(verdict, p_yes, "verdict", self.sufficiency_threshold, verdict.missing)
        trace.append(TraceStep("retriever", f"sufficiency.{stage}", {},
                               {"sufficient": judgement.passed, "missing": verdict.missing, **judgement.trace()},
                               cost=cost))
        return judgement.passed
