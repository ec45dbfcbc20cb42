"""The reasoning tree or graph as trace steps: every state (thought, action, observation, grounding
nodes, parents), every evaluation (choices and scores) and every merge."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from thinkgraph.methods.kgr.names import NodeNames
from thinkgraph.methods.kgr.state import ChainState
from thinkgraph.models import TraceStep


@dataclass
class Recorder:
    steps: list[TraceStep] = field(default_factory=list)  # the question's trace (methods.base.MethodContext)
    invalid_actions: int = 0
    parse_failures: int = 0
    repairs: int = 0  # step replies with no action, asked again (KGRConfig.repair)
    repeated_actions: int = 0  # actions the chain had already taken, not run again
    names: NodeNames | None = None  # the agent's names of the nodes, where they are short (methods/kgr/names.py)

    def state(self, state: ChainState, *, invalid: bool = False, action: str | None = None) -> None:
        self.invalid_actions += invalid
        last = state.steps[-1]
        outputs: dict[str, Any] = {"thought": last.thought, "action": last.action, "observation": last.observation,
                                   "nodes": last.nodes}
        names = self.names.of_ext(last.nodes) if self.names is not None and self.names.short else {}
        if names:  # the short names the step showed, with the ids they stand for
            outputs["names"] = names
        if last.triples:
            outputs["triples"] = [list(t) for t in last.triples]
        if last.attributes:
            outputs["attributes"] = last.attributes
        if state.answer is not None:
            outputs["answer"] = state.answer
        action = action or ("merge" if last.merged else "step")
        self.steps.append(TraceStep("reasoner", action, {"state": state.id, "parents": list(state.parents),
                                                         "depth": state.depth}, outputs))

    def evaluation(self, kind: str, candidates: list[ChainState], ranked: list[ChainState]) -> None:
        self.steps.append(TraceStep("evaluator", kind, {"candidates": [c.id for c in candidates]},
                                    {"ranking": [s.id for s in ranked],
                                     "scores": {s.id: s.score for s in candidates}}))

    def note(self, action: str, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        self.steps.append(TraceStep("explorer", action, inputs, outputs))
