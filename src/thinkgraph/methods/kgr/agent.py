"""Agent interaction (§4.2.1, Graph-CoT): each step is one model call that writes a thought and an
action; the action runs on the graph and its result is the observation the next step sees."""

from __future__ import annotations

from itertools import count

from thinkgraph.llm.service import LLM
from thinkgraph.methods.kgr.actions import REACT_STOP, GraphEnvironment, parse_step
from thinkgraph.methods.kgr.examples import examples
from thinkgraph.methods.kgr.prompts import AGENT_STEP, EDGE_TYPES_ACTION, EDGE_TYPES_NOTE, MERGE, MERGE_AGENT_FORMAT
from thinkgraph.methods.kgr.state import ChainState, Step, merge_steps
from thinkgraph.methods.kgr.trace import Recorder

THOUGHT_STEP = "kgr.thought"
MERGE_STEP = "kgr.merge"


class AgentStepper:
    def __init__(self, llm: LLM, env: GraphEnvironment, question: str, recorder: Recorder, ids: count[int], *,
                 few_shot: bool = True, graph_chars: int | None = None) -> None:
        """``graph_chars``: the bound on the graph definition (KGRConfig.graph_chars); when it leaves
        edge types out, the prompts offer EdgeTypes[node id] as a sixth action."""
        self.llm, self.env, self.question, self.recorder, self.ids = llm, env, question, recorder, ids
        self.few_shot = few_shot
        described = env.graph.description(graph_chars)
        self.edge_types_offered = described.hidden_edge_types > 0
        self.graph_definition = described.text + (f"\n{EDGE_TYPES_NOTE}" if self.edge_types_offered else "")
        self.extra_actions = EDGE_TYPES_ACTION if self.edge_types_offered else ""
        self.merge_format = (MERGE_AGENT_FORMAT.replace(" or Finish[answer]", ", EdgeTypes[node id] or Finish[answer]")
                             if self.edge_types_offered else MERGE_AGENT_FORMAT)

    async def step(self, state: ChainState, variant: str) -> ChainState:
        prompt = AGENT_STEP.format(graph=self.graph_definition, question=self.question,
                                   scratchpad=state.scratchpad(), variant=variant, extra_actions=self.extra_actions,
                                   examples=examples("agent", self.few_shot))
        reply = await self.llm.text([{"role": "user", "content": prompt}], step=THOUGHT_STEP, kind="action",
                                    stop=REACT_STOP)
        return self._act(state, reply, merged=False, parents=(state.id,))

    async def merge(self, a: ChainState, b: ChainState, variant: str) -> ChainState:
        prompt = MERGE.format(format=self.merge_format, question=self.question, chain_1=a.render(),
                              chain_2=b.render(), variant=variant, examples=examples("merge_agent", self.few_shot))
        reply = await self.llm.text([{"role": "user", "content": prompt}], step=MERGE_STEP, kind="action",
                                    stop=REACT_STOP)
        base = ChainState(-1, merge_steps(a, b), depth=max(a.depth, b.depth) - 1)  # merged: same level
        return self._act(base, reply, merged=True, parents=(a.id, b.id))

    def _act(self, state: ChainState, reply: str, *, merged: bool, parents: tuple[int, ...]) -> ChainState:
        thought, actions = parse_step(reply)
        observation = self.env.run(actions)
        step = Step(thought, ", ".join(a.render() for a in actions) or "(none)", observation.text,
                    observation.nodes, merged=merged)
        child = state.child(self.ids, step, observation.answer)
        child.parents = parents
        self.recorder.state(child, invalid=observation.invalid)
        return child
