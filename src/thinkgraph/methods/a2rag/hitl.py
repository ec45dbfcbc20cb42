"""Human-in-the-loop queue: after a verified answer, candidate triples with source pointers are
proposed; a reviewer approves (they enter the graph with provenance) or rejects them."""

from __future__ import annotations

from pydantic import BaseModel, Field

from thinkgraph.errors import InputError, LLMUnavailableError, NotFoundError, StructuredOutputError
from thinkgraph.index.records import Extraction, TripleSpec, extraction_records
from thinkgraph.index.stages import mark_outdated
from thinkgraph.llm.service import LLM
from thinkgraph.methods.a2rag.prompts import PROPOSE_TRIPLES
from thinkgraph.models import Chunk, Proposal
from thinkgraph.retrieval.evidence import ScoredPassage
from thinkgraph.store.base import GraphStore

PROPOSE_STEP = "a2rag.hitl.propose"
MAX_PROPOSALS = 5


class ProposedTriple(BaseModel):
    subject: str = Field(min_length=1)
    relation: str = Field(min_length=1)
    object: str = Field(min_length=1)
    passage: int


class ProposalReply(BaseModel):
    triples: list[ProposedTriple] = Field(default_factory=list)


async def propose_triples(store: GraphStore, llm: LLM, question: str, answer: str,
                          passages: list[ScoredPassage]) -> list[int]:
    """Queue triples that support a verified answer; returns the proposal ids."""
    numbered = "\n".join(f"[{i}] {p.text}" for i, p in enumerate(passages, 1))
    prompt = PROPOSE_TRIPLES.format(max_triples=MAX_PROPOSALS, question=question, answer=answer, passages=numbered)
    try:
        reply = await llm.json([{"role": "user", "content": prompt}], ProposalReply, step=PROPOSE_STEP,
                               kind="extraction")
    except StructuredOutputError:
        return []
    except LLMUnavailableError:
        raise
    ids = []
    for t in reply.triples[:MAX_PROPOSALS]:
        if not 1 <= t.passage <= len(passages):
            continue  # a proposal must point at a source
        source = passages[t.passage - 1]
        ids.append(store.add_proposal(Proposal(question, t.subject, t.relation, t.object, source.chunk_id,
                                               source.doc_id)))
    return ids


def review(store: GraphStore, proposal_id: int, approve: bool) -> Proposal:
    """Approve (add to the graph with provenance to its chunk) or reject a pending proposal."""
    found = [p for p in store.list_proposals("pending") if p.id == proposal_id]
    if not found:
        raise NotFoundError(f"no pending proposal {proposal_id}")
    proposal = found[0]
    if approve:
        node = store.get_node(proposal.chunk_id)
        prov = next((p for p in store.provenance(proposal.chunk_id) if p.chunk_id == proposal.chunk_id), None)
        if node is None or prov is None:
            raise InputError(f"proposal {proposal_id} points at chunk {proposal.chunk_id}, which is gone")
        chunk = Chunk(node.id, prov.doc_id, node.text, prov.start or 0, prov.end or len(node.text), 0, 0)
        records = extraction_records(chunk, Extraction(triples=[TripleSpec(
            proposal.subject, proposal.predicate, proposal.object)]))
        for n in records.nodes:
            n.props["source"] = "review"
        with store.transaction():
            store.add_nodes(records.nodes)
            store.add_edges(records.edges)
            store.add_provenance(records.provenance)
            store.set_proposal_status(proposal_id, "approved")
            mark_outdated(store)
    else:
        store.set_proposal_status(proposal_id, "rejected")
    proposal.status = "approved" if approve else "rejected"
    return proposal
