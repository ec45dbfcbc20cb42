"""ToG-3's Constructor (Alg. 2 line 9, App. J Fig. 15): evolve the subgraph for a sub-query by
retrieving for it, extracting triplets from newly reached chunks the index has none for, and refining
the merged triples with the LLM."""

from __future__ import annotations

from dataclasses import dataclass, field

from thinkgraph.errors import LLMUnavailableError, StructuredOutputError
from thinkgraph.index.extract_llm import LLMTripletExtractor
from thinkgraph.index.records import extraction_records
from thinkgraph.index.stages import mark_outdated
from thinkgraph.llm.service import LLM
from thinkgraph.methods.tog3.agents import Retriever, parse_triples
from thinkgraph.methods.tog3.config import ToG3Config
from thinkgraph.methods.tog3.prompts import REFINE
from thinkgraph.methods.tog3.subgraph import Subgraph, Triple, TripleTypes, merge_types
from thinkgraph.models import Chunk, SourceDocument, TraceStep

# Set when triplets were written during a query: the next `thinkgraph index` run embeds them and
# rebuilds communities (the same flag a reviewed A2RAG proposal sets).


@dataclass
class ExtractionLog:
    """What on-the-fly extraction did during one question (for the trace and the answer's message)."""

    chunks: list[str] = field(default_factory=list)
    # chunks whose extraction failed: not asked again in a later round of the question (the same passage
    # and prompt fail the same way; on a triplet-free index every round reaches its passages again)
    failed: list[str] = field(default_factory=list)
    triples: int = 0
    written: bool = False
    read_only: bool = False  # the index could not be written

    def message(self) -> str | None:
        if not self.chunks:
            return f"triplet extraction failed on {len(self.failed)} passage(s)" if self.failed else None
        what = f"extracted {self.triples} triplet(s) from {len(self.chunks)} passage(s) that had none"
        if self.failed:
            what += f" ({len(self.failed)} other(s) failed)"
        if self.written:
            return (f"{what} and wrote them to the index (write_triplets=true; the next `thinkgraph index` "
                    "run embeds them)")
        why = "the index is read-only" if self.read_only else "write_triplets=false"
        return f"{what}, for this question only ({why})"


@dataclass
class Constructor:
    retriever: Retriever
    llm: LLM
    config: ToG3Config
    log: ExtractionLog = field(default_factory=ExtractionLog)

    @property
    def writes(self) -> bool:
        """Whether extracted triplets go into the index: asked for, and the index can be written."""
        return self.config.write_triplets and not self.retriever.view.store.read_only

    async def evolve(self, sub_query: str, current: Subgraph, trace: list[TraceStep]) -> Subgraph:
        new = await self.retriever.retrieve(sub_query, trace)
        extracted = await self._extract_new_chunks(new.passages, trace)
        merged = Subgraph(passages=list(dict.fromkeys(new.passages + current.passages)),
                          triples=list(dict.fromkeys(current.triples + new.triples + list(extracted))),
                          communities=list(dict.fromkeys(new.communities + current.communities)),
                          types=merge_types([current, new], extracted))
        merged.passages = merged.passages[: self.config.context_passages]
        return await self._refine(sub_query, merged, trace)

    async def _extract_new_chunks(self, chunk_ids: list[str], trace: list[TraceStep]) -> dict[Triple, TripleTypes]:
        """Typed triplets for reached chunks the index has none for (Alg. 1's extraction, done on
        demand), in the order found; written to the index with provenance when ``write_triplets``
        is on."""
        store = self.retriever.view.store
        extractor = LLMTripletExtractor(self.llm, max_triplets=self.config.max_triplets_per_chunk, bounded=True)
        found: dict[Triple, TripleTypes] = {}
        for node in store.get_nodes(chunk_ids):
            asked = node.id in self.log.chunks or node.id in self.log.failed
            if asked or self.retriever.links.triplets_of.get(node.id):
                continue
            prov = next((p for p in store.provenance(node.id) if p.chunk_id == node.id), None)
            if prov is None:
                continue
            chunk = Chunk(node.id, prov.doc_id, node.text, prov.start or 0, prov.end or len(node.text), 0, 0)
            doc = SourceDocument(prov.doc_id, str(node.props.get("title", "")), node.text, prov.doc_id)
            try:
                extraction = await extractor.extract(doc, chunk)
            except StructuredOutputError as exc:
                self.log.failed.append(node.id)
                trace.append(TraceStep("constructor", "extract.failed", {"chunk": node.id}, {"error": str(exc)}))
                continue
            except LLMUnavailableError:
                raise
            new = [(t.subject, t.predicate, t.object) for t in extraction.triples]
            for t, triple in zip(extraction.triples, new, strict=True):
                found.setdefault(triple, TripleTypes(t.subject_type, t.relation_type, t.object_type))
            if self.writes:
                records = extraction_records(chunk, extraction)
                with store.transaction():
                    store.add_nodes(records.nodes)
                    store.add_edges(records.edges)
                    store.add_provenance(records.provenance)
                    mark_outdated(store)
                self.retriever.links.add(records.edges)  # the Retriever reaches them from now on
                self.log.written = True
            self.log.read_only = store.read_only
            self.log.chunks.append(node.id)
            self.log.triples += len(new)
            trace.append(TraceStep("constructor", "extract", {"chunk": node.id},
                                   {"triples": new, "types": [found[t].props() for t in new],
                                    "written_to_index": self.writes}))
        return found

    async def _refine(self, query: str, graph: Subgraph, trace: list[TraceStep]) -> Subgraph:
        if not graph.triples:
            return graph
        listing = "\n".join(f"{s} -> {p} -> {o}" for s, p, o in graph.triples)
        reply = await self.llm.text([{"role": "user", "content": REFINE.format(query=query, triples=listing)}],
                                    step="tog3.refine", kind="extraction")
        refined = parse_triples(reply)
        if refined is not None and not refined:  # unparseable: keep the subgraph as it was
            trace.append(TraceStep("constructor", "refine.unparsed", {}, {"reply": reply[:200]}))
            return graph
        refined = refined or []
        before = set(graph.triples)
        trace.append(TraceStep("constructor", "refine", {"query": query}, {
            "removed": [list(t) for t in graph.triples if t not in set(refined)],
            "added": [list(t) for t in refined if t not in before]}))
        graph.triples = refined
        return graph
