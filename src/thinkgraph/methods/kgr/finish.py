"""The finishing step at the step limit (ours, KGRConfig.finish_at_limit): a chain that has not written
Finish[answer] by its last step answers from what it found, its steps and, on a corpus-built index,
the passages of the nodes it reached, in the answer format every passage-citing method shares
(methods/replies.py). The paper ends such a chain as "reached limit" without an answer."""

from __future__ import annotations

from itertools import count

from thinkgraph.llm.service import LLM
from thinkgraph.methods.kgr.grounding import chain_nodes, grounding_passages
from thinkgraph.methods.kgr.prompts import AGENT_STEP, EXPLORE_THOUGHT, FINISH_AT_LIMIT, FINISH_PASSAGES
from thinkgraph.methods.kgr.state import ChainState, Step
from thinkgraph.methods.kgr.trace import Recorder
from thinkgraph.methods.replies import answer_format, answer_trace, ask_answer
from thinkgraph.methods.synthesis import fit_passages, numbered_passages
from thinkgraph.models import AnswerStatus
from thinkgraph.retrieval.evidence import passages_from_scores
from thinkgraph.store.base import GraphStore
from thinkgraph.typedkg import TypedGraph

FINISH_STEP = "kgr.finish"
PROMPT_OVERHEAD_TOKENS = 300  # the prompt's own words and the answer format
CHARS_PER_TOKEN = 3  # conservative: the chain is cut by characters before it is counted
# A reply that repeats the finishing prompt, or the step prompt a chain's steps may have copied (Gemma 3
# 270M's steps did, and its finishing reply repeated them), has not answered.
ECHOED = (FINISH_AT_LIMIT, AGENT_STEP, EXPLORE_THOUGHT)
# The statuses whose reading is the chain's answer (an abstention included: "Unknown" is what it found).
ANSWERING = (AnswerStatus.ANSWERED, AnswerStatus.ABSTAINED, AnswerStatus.TRUNCATED)


class Finisher:
    def __init__(self, llm: LLM, graph: TypedGraph, store: GraphStore | None, question: str, recorder: Recorder,
                 ids: count[int]) -> None:
        """``store``: the index whose passages a corpus-built graph's passage nodes are (None: no passages)."""
        self.llm, self.graph, self.store, self.question = llm, graph, store, question
        self.recorder, self.ids = recorder, ids

    async def finish(self, state: ChainState, *, merged: bool = False) -> ChainState:
        settings, counter = self.llm.settings, self.llm.counter
        budget = settings.context_window - settings.max_tokens.answer - PROMPT_OVERHEAD_TOKENS \
            - counter.count(self.question)
        chain = state.render(max_chars=budget // 2 * CHARS_PER_TOKEN)
        passages = []
        if self.store is not None:
            ids = grounding_passages(self.graph, chain_nodes(self.graph, state.nodes))
            passages = fit_passages(passages_from_scores(self.store, [(cid, 0.0) for cid in ids]),
                                    budget - counter.count(chain), counter)
        items = "passages" if passages else "steps"
        prompt = FINISH_AT_LIMIT.format(
            chain=chain.rstrip("\n"), found="the steps and the passages" if passages else "the steps",
            answer_format=answer_format(items, self.question),
            passages=FINISH_PASSAGES.format(passages=numbered_passages(passages)) if passages else "")
        asked = await ask_answer(self.llm, [{"role": "user", "content": prompt}], passages, step=FINISH_STEP,
                                 prompt_template=ECHOED, question=self.question)
        read = asked.read
        self.recorder.steps.append(answer_trace("reasoner", FINISH_STEP, "FINISH_AT_LIMIT", asked, {
            "state": state.id, "passages": [p.chunk_id for p in passages]}, len(passages)))
        answer = read.text if read.status in ANSWERING and read.text else None
        cited = [p.chunk_id for p in read.cited] if passages else []
        step = Step(read.reasoning or "", "Finish (at the step limit)",
                    f"Finished: {answer}" if answer is not None else f"No answer: {read.message or read.status}",
                    cited, merged=merged)
        child = state.child(self.ids, step, answer)
        child.final = read
        self.recorder.state(child, action="finish")
        return child
