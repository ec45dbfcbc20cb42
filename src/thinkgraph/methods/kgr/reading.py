"""kgr's answer by the one reader (``KGRConfig.reader = "shared"``, on a corpus-built index): when the
chain ends, finished or at its step limit, the reader answers from the passages behind the nodes the
chain visited (grounding.py's order: the passages it read, then those mentioning the most of its
entities), with the relations it followed (explore's triples; for the agent, its actions and the start
of what each found) and the chain's own Finish[...] beside them. The chain's
Finish is often a node id or the bridge entity it stood on; the reader reads what the chain reached."""

from __future__ import annotations

from thinkgraph.llm.service import LLM
from thinkgraph.methods.kgr.grounding import Fill, Relevance, chain_nodes, grounding_passages
from thinkgraph.methods.kgr.state import ChainState
from thinkgraph.methods.layout import Notes
from thinkgraph.methods.reader import ReaderInput, read
from thinkgraph.methods.replies import AnswerReply
from thinkgraph.models import TraceStep
from thinkgraph.retrieval.evidence import ScoredPassage, passages_from_scores
from thinkgraph.store.base import GraphStore
from thinkgraph.typedkg import TypedGraph

READ_STEP = "kgr.read"
OBSERVATION_CHARS = 200  # of each step's observation shown to the reader (the passages carry the text)


def steps_taken(chain: ChainState) -> list[str]:
    """The agent's actions with the start of what each observed (explore's triples say it in its stead):
    the relations the agent followed are its NeighborCheck actions and the neighbours they listed."""
    lines = []
    for step in chain.steps:
        if not step.action or step.action.startswith("Finish"):
            continue
        seen = " ".join(step.observation.split())
        lines.append(f"{step.action} -> {seen[:OBSERVATION_CHARS]}{'...' if len(seen) > OBSERVATION_CHARS else ''}")
    return lines


async def read_chain(llm: LLM, store: GraphStore, graph: TypedGraph, question: str, chain: ChainState,
                     trace: list[TraceStep], max_passages: int, *, relevance: Relevance | None = None,
                     neighbourhood: bool = False, fill: Fill | None = None) -> AnswerReply[ScoredPassage] | None:
    """The reader's answer from what ``chain`` reached (with ``neighbourhood``, and the passages one
    relation from it; with ``fill``, the passages it ranks: grounding.py); None when it reached no
    passage (nothing to read)."""
    ids = grounding_passages(graph, chain_nodes(graph, chain.nodes), max_passages, relevance=relevance,
                             neighbourhood=neighbourhood, fill=fill)
    if not ids:
        return None
    passages = passages_from_scores(store, [(cid, 0.0) for cid in ids])
    notes = [Notes("Relations the graph search followed (head -> relation -> tail)",
                   [f"{h} -> {r} -> {t}" for h, r, t in chain.triples]),
             Notes("Steps the graph search took (action -> what it found)",
                   [] if chain.triples else steps_taken(chain)),
             Notes("The graph search's own answer", [chain.answer] if chain.answer else [])]
    asked, _ = await read(llm, ReaderInput(question, passages, notes), step=READ_STEP, trace=trace,
                          agent="reasoner", inputs={"state": chain.id, "finished": chain.answer is not None})
    return asked.read
