"""Agent interaction (§4.2.1, Graph-CoT): each step is one model call that writes a thought and an
action; the action runs on the graph and its result is the observation the next step sees.

Ours, for small instruct models: the steps so far are the conversation's turns (the model's step, the
graph's observation), and the last turn names the step to write and the question again; a reply with
no action, a repeated step or a Finish that no observation supports is asked again once (a bounded
repair); an action the chain already took is not run again,
its observation says so and names what could follow; Finish[answer] is read like every method's answer
(a lead-in "The answer is" taken off, "Unknown" an abstention, a node id replaced by the node's name)."""

from __future__ import annotations

from itertools import count

from thinkgraph.llm.service import LLM, Message
from thinkgraph.methods.answer_shape import stated_in
from thinkgraph.methods.kgr.actions import REACT_STOP, Action, GraphEnvironment, Observation, is_placeholder, parse_step
from thinkgraph.methods.kgr.examples import examples
from thinkgraph.methods.kgr.finish import Finisher
from thinkgraph.methods.kgr.grounding import MENTIONED_IN, PASSAGE_TYPE, corpus_built
from thinkgraph.methods.kgr.prompts import (
    ACTION_REPAIR,
    AGENT_CLOSING,
    AGENT_OBSERVATION,
    AGENT_STEP,
    AGENT_TURN,
    EDGE_TYPES_ACTION,
    EDGE_TYPES_NOTE,
    FINISH_HINT,
    LAST_STEPS_HINT,
    MERGE,
    MERGE_AGENT_FORMAT,
    NEXT_ADVICE,
    PLACEHOLDER_REPAIR,
    REPEAT_REPAIR,
    REPEATED_ACTION,
    SAME_RESULT_REPAIR,
    UNGROUNDED_REPAIR,
    UNTRIED,
)
from thinkgraph.methods.kgr.state import ChainState, Step, merge_steps
from thinkgraph.methods.kgr.trace import Recorder

THOUGHT_STEP = "kgr.thought"
MERGE_STEP = "kgr.merge"
REPAIR_STEP = "kgr.thought.repair"
LAST_STEPS = 3  # from this many steps left, the closing line asks for Finish as soon as possible
CHARS_PER_TOKEN = 3  # conservative: the scratchpad is bounded in characters
MIN_SCRATCHPAD_CHARS = 2000
Observed = tuple[Observation, int | None]  # an observation, and the earlier step that took the same actions
RETRIEVED_EDGE_TYPES = 8  # a retrieved node's edge types in its observation, when the definition omits some
MAX_NODES_ADVISED = 3  # nodes of a repeated step whose untried actions are suggested
MAX_ADVISED = 2  # untried actions suggested


class AgentStepper:
    def __init__(self, llm: LLM, env: GraphEnvironment, question: str, recorder: Recorder, ids: count[int], *,
                 few_shot: bool = True, graph_chars: int | None = None, limit: int = 10,
                 finisher: Finisher | None = None) -> None:
        """``graph_chars``: the bound on the graph definition (KGRConfig.graph_chars); when it leaves
        edge types out, the prompts offer EdgeTypes[node id] as a sixth action. ``limit``: the steps
        of a chain (n, or the tree's depth), told to the model. ``finisher``: the finishing step at
        the step limit (KGRConfig.finish_at_limit)."""
        self.llm, self.env, self.question, self.recorder, self.ids = llm, env, question, recorder, ids
        self.few_shot, self.limit, self.finisher = few_shot, limit, finisher
        described = env.graph.description(graph_chars)
        self.edge_types_offered = described.hidden_edge_types > 0
        self.graph_definition = described.text + (f"\n{EDGE_TYPES_NOTE}" if self.edge_types_offered else "")
        self.extra_actions = EDGE_TYPES_ACTION if self.edge_types_offered else ""
        if self.edge_types_offered and not env.node_edge_types:  # the definition cannot list them all
            env.node_edge_types = RETRIEVED_EDGE_TYPES
        self.merge_format = (MERGE_AGENT_FORMAT.replace(" or Finish[answer]", ", EdgeTypes[node id] or Finish[answer]")
                             if self.edge_types_offered else MERGE_AGENT_FORMAT)
        self.repair_text = ACTION_REPAIR.format(extra=", EdgeTypes[node id]" if self.edge_types_offered else "")
        self.examples = examples("agent_corpus" if corpus_built(env.graph) else "agent", few_shot,
                                 short_names=env.names.short)
        settings = llm.settings
        fixed = llm.counter.count(self._opening(""))
        room = settings.context_window - settings.max_tokens.action - fixed
        self.scratchpad_chars = max(room * CHARS_PER_TOKEN, MIN_SCRATCHPAD_CHARS)

    def _opening(self, variant: str) -> str:
        return AGENT_STEP.format(graph=self.graph_definition, question=self.question, variant=variant,
                                 extra_actions=self.extra_actions, examples=self.examples, limit=self.limit)

    def messages(self, state: ChainState, variant: str) -> list[Message]:
        """The step's conversation: the task, then each step as the model's turn and its observation as
        the next user turn; the last one names the step to write and the question again. Consecutive steps
        of a chain share all of it but that closing, for a server's prompt cache: the task is the same at
        every step, and earlier observations are shortened alike at every step (``stable``)."""
        if not state.steps:
            return [{"role": "user", "content": self._opening(variant)}]
        messages: list[Message] = [{"role": "user", "content": self._opening("")}]
        shown = state.observations(self.scratchpad_chars, stable=True)
        for n, (step, observation) in enumerate(zip(state.steps, shown, strict=True), 1):
            messages.append({"role": "assistant", "content": AGENT_TURN.format(n=n, thought=step.thought,
                                                                               action=step.action)})
            messages.append({"role": "user", "content": AGENT_OBSERVATION.format(n=n, observation=observation)})
        left = self.limit - state.spent
        hint = LAST_STEPS_HINT.format(left=left) if left <= LAST_STEPS else FINISH_HINT
        messages[-1]["content"] += AGENT_CLOSING.format(n=len(state.steps) + 1, limit=self.limit,
                                                        question=self.question, hint=hint, variant=variant)
        return messages

    async def step(self, state: ChainState, variant: str, *, repair: bool = True) -> ChainState:
        """One step. ``repair``: a reply with no action, whose action repeats an earlier step's (the same
        action, or one that finds just what an earlier step found), or whose Finish names what no
        observation says, is asked again once, in the same conversation, with what was wrong and which
        actions could follow; the second reply stands."""
        messages = self.messages(state, variant)
        reply = await self.llm.text(messages, step=THOUGHT_STEP, kind="action", stop=REACT_STOP)
        thought, actions = parse_step(reply)
        observed = self._observe(state, actions)
        repairs = 0
        problem = self._problem(state, actions, observed) if repair else None
        if problem is not None:
            self.recorder.repairs += 1
            repairs = 1
            again = await self.llm.text([*messages, {"role": "assistant", "content": reply},
                                         {"role": "user", "content": problem}],
                                        step=REPAIR_STEP, kind="action", stop=REACT_STOP)
            second_thought, second = parse_step(again)
            if second:
                thought, actions = second_thought or thought, second
                observed = self._observe(state, actions)
        return self._record(state, thought, actions, observed, merged=False, parents=(state.id,), repairs=repairs)

    def _problem(self, state: ChainState, actions: list[Action], observed: Observed) -> str | None:
        """The repair message for a reply that is no new step, or None."""
        if not actions:
            return self.repair_text
        observation, taken = observed
        n, rendered = len(state.steps) + 1, ", ".join(a.render() for a in actions)
        if any(a.name == "Finish" and is_placeholder(a.args[0]) for a in actions):
            return PLACEHOLDER_REPAIR.format(action=rendered, n=n, advice=self._advice(state, None))
        if taken is not None:
            return REPEAT_REPAIR.format(n=n, step=taken, action=rendered, advice=self._advice(state, taken))
        same = _same_result(state, observation)
        if same is not None:
            return SAME_RESULT_REPAIR.format(n=n, step=same, action=rendered, advice=self._advice(state, same))
        answer = self.env.answer_text(observation.answer, state.nodes)
        if answer is not None and not stated_in(answer, [s.observation for s in state.steps]):
            return UNGROUNDED_REPAIR.format(n=n, answer=answer, advice=self._advice(state, None))
        return None

    def _observe(self, state: ChainState, actions: list[Action]) -> Observed:
        """The observation of the actions, and the earlier step that took them already (they are not run
        again: its observation says so)."""
        taken = _taken_at(state, actions)
        if taken is None:
            return self.env.run(actions), None
        text = REPEATED_ACTION.format(action=", ".join(a.render() for a in actions), step=taken,
                                      advice=self._advice(state, taken))
        return Observation(text), taken

    async def merge(self, a: ChainState, b: ChainState, variant: str) -> ChainState:
        prompt = MERGE.format(format=self.merge_format, question=self.question, chain_1=a.render(),
                              chain_2=b.render(), variant=variant, examples=examples("merge_agent", self.few_shot))
        reply = await self.llm.text([{"role": "user", "content": prompt}], step=MERGE_STEP, kind="action",
                                    stop=REACT_STOP)
        base = ChainState(-1, merge_steps(a, b), depth=max(a.depth, b.depth) - 1)  # merged: same level
        thought, actions = parse_step(reply)
        return self._record(base, thought, actions, self._observe(base, actions), merged=True, parents=(a.id, b.id))

    async def finish(self, state: ChainState, variant: str) -> ChainState:
        if self.finisher is None:
            return await self.step(state, variant)
        return await self.finisher.finish(state)

    def _record(self, state: ChainState, thought: str, actions: list[Action], observed: Observed, *, merged: bool,
                parents: tuple[int, ...], repairs: int = 0) -> ChainState:
        observation, taken = observed
        self.recorder.repeated_actions += taken is not None
        step = Step(thought, ", ".join(a.render() for a in actions) or "(none)", observation.text,
                    observation.nodes, merged=merged)
        answer = self.env.answer_text(observation.answer, state.nodes)
        child = state.child(self.ids, step, answer, repairs=repairs)
        child.parents = parents
        self.recorder.state(child, invalid=observation.invalid)
        return child

    def _advice(self, state: ChainState, step: int | None) -> str:
        """What could follow a repeated step (ours, for a model that repeats itself): Finish, the next name
        looked up, or an action on the nodes that step reached that the chain has not taken (a passage's
        text, an entity's passages or edge types)."""
        graph, taken = self.env.graph, {_key_text(s.action) for s in state.steps}
        untried: list[str] = []
        reached = state.steps[step - 1].nodes if step else [n for s in reversed(state.steps) for n in s.nodes]
        for ext in reached[:MAX_NODES_ADVISED]:
            found = graph.lookup(ext)
            if found is None:
                continue
            node = self.env.names.name(found)
            if graph.node_type(found) == PASSAGE_TYPE:
                options = [f"NodeFeature[{node}, text]"]
            else:
                options = [f"NeighborCheck[{node}, {MENTIONED_IN}]"] if MENTIONED_IN in graph.edge_types_of(found) \
                    else []
                options += [f"EdgeTypes[{node}]"] if self.edge_types_offered else []
            untried += [o for o in options if _key_text(o) not in taken and o not in untried]
        shown = UNTRIED.format(actions=", ".join(untried[:MAX_ADVISED])) if untried else ""
        return NEXT_ADVICE.format(untried=shown)


def _same_result(state: ChainState, observation: Observation) -> int | None:
    """The earlier step whose observation this one repeats word for word (RetrieveNode of another text that
    finds the same node), or None. An invalid action's message is not a result."""
    if observation.invalid or observation.answer is not None:
        return None
    return next((i for i, s in enumerate(state.steps, 1) if s.observation == observation.text), None)


def _taken_at(state: ChainState, actions: list[Action]) -> int | None:
    """The step (1-based) of the chain that already took these graph actions, or None. Finish is never
    a repeat (it ends the chain)."""
    if not actions or any(a.name == "Finish" for a in actions):
        return None
    wanted = _key(actions)
    return next((i for i, s in enumerate(state.steps, 1) if s.action and _key_text(s.action) == wanted), None)


def _key(actions: list[Action]) -> str:
    return _key_text(", ".join(a.render() for a in actions))


def _key_text(text: str) -> str:
    return " ".join(text.casefold().replace("'", "").replace('"', "").split())
