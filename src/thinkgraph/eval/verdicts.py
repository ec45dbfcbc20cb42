"""The yes/no verdicts a question's answer went through, as evaluation records keep them for
calibration (benchmarks/calibrate_verdicts.py): each judgement's step, P(yes) where the server gave
log-probabilities, the verdict as written, and the answer it judged (the last draft or round answer
before it in the trace), so that a verdict can be scored against the gold answers."""

from __future__ import annotations

from typing import Any

from thinkgraph.models import Answer

ANSWER_KEYS = ("answer", "reply")  # a Responser's round answer (tog3), a draft (a2rag)
MAX_ANSWER_CHARS = 400


def verdict_log(answer: Answer) -> list[dict[str, Any]]:
    """One entry per trace step that carries a P(yes) (a number, or one per field for a joint verdict)."""
    out: list[dict[str, Any]] = []
    judged: str | None = None
    for step in answer.trace:
        outputs = step.outputs or {}
        for key in ANSWER_KEYS:
            if isinstance(outputs.get(key), str):
                judged = outputs[key][:MAX_ANSWER_CHARS]
        if "p_yes" not in outputs:
            continue
        p = outputs["p_yes"]
        entries = p.items() if isinstance(p, dict) else [("verdict", p)]
        written = outputs.get("written")
        for field, value in entries:
            said = written.get(field) if isinstance(written, dict) else written
            out.append({"step": step.action, "field": field, "p_yes": value, "written": said, "judged": judged})
    return out
