"""Typed triplets (ToG-3 §3.2.1: type_s, type_p, type_o; Fig. 11) from LLM extraction into the index
and on to tog3's evidence graph, whether the index holds them or the Constructor extracts them on
the fly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support import FIXTURES, HashEmbedder
from test_tog3_evidence import QUESTION, Reader
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.llm.backend import ChatRequest
from thinkgraph.models import Answer
from thinkgraph.testing import ScriptedBackend

# What a model that follows the prompt returns for each passage of the bridge corpus.
TYPED = {
    "founded Acme Corp": ("Alice Stone", "Person", "founded", "Creation", "Acme Corp", "Organization"),
    "based in Rivertown": ("Acme Corp", "Organization", "based in", "Location", "Rivertown", "Place"),
    "lies in the Greenland": ("Rivertown", "Place", "lies in", "Location", "Greenland Valley", "Place"),
    "works at Acme": ("Bob Reed", "Person", "works at", "Employment", "Acme Corp", "Organization"),
    "born in Rivertown": ("Carol Diaz", "Person", "born in", "Origin", "Rivertown", "Place"),
    "orbits the Earth": ("Moon", "Celestial body", "orbits", "Motion", "Earth", "Planet"),
}


def typed_extraction(request: ChatRequest) -> str:
    text = request.messages[0]["content"].split("## Text", 1)[1]
    found = [t for needle, t in TYPED.items() if needle in text]
    entities = [{"entity_name": name, "entity_type": etype} for s, st, _, _, o, ot in found
                for name, etype in ((s, st), (o, ot))]
    relations = [{"source_entity": s, "target_entity": o, "relation": p, "relation_type": pt}
                 for s, _, p, pt, o, _ in found]
    return json.dumps({"entities": entities, "relationships": relations})


@pytest.fixture
def typed_index(tmp_path: Path) -> Path:
    path = tmp_path / "typed.db"
    settings = Settings()
    settings.index.extractor = "llm"
    settings.index.communities = "always"
    settings.index.summarize_communities = False
    settings.index.document_summaries = "first_sentences"
    backend = ScriptedBackend(rules=[("build a small knowledge graph", typed_extraction)])
    with ThinkGraph(path, settings=settings, embedder=HashEmbedder(), backend=backend) as tg:
        tg.index([FIXTURES / "bridge_corpus.jsonl"])
    return path


def typed_edge(answer: Answer, predicate: str) -> dict:
    (edge,) = [e for e in answer.evidence.edges if e.props.get("predicate") == predicate]
    return edge.props


@pytest.mark.parametrize("form", ["shared", "paper"])
async def test_the_evidence_graph_carries_the_types_the_index_holds(typed_index: Path, form: str) -> None:
    with ThinkGraph.open(typed_index, settings=Settings(), embedder=HashEmbedder()) as tg:
        triplet = next(n for n in tg.store.iter_nodes("triplet") if n.props["predicate"] == "based in")
        assert (triplet.props["subject_type"], triplet.props["relation_type"], triplet.props["object_type"]) == (
            "Organization", "Location", "Place")
        answer = await tg.aretrieve(QUESTION, "tog3", top_k=10, retrieval=form)
    assert typed_edge(answer, "based in") == {"predicate": "based in", "subject_type": "Organization",
                                              "relation_type": "Location", "object_type": "Place"}
    nodes = {n.text: n for n in answer.evidence.nodes if n.type == "entity"}
    assert nodes["Rivertown"].props["type"] == "Place" and nodes["Acme Corp"].props["type"] == "Organization"
    # every relation of the evidence carries the types its extraction gave
    assert all(e.props.get("relation_type") for e in answer.evidence.edges)


async def test_community_relations_carry_their_types(typed_index: Path) -> None:
    from thinkgraph.methods.tog3 import ToG3Config
    from thinkgraph.methods.tog3.agents import Retriever

    with ThinkGraph.open(typed_index, settings=Settings(), embedder=HashEmbedder()) as tg:
        community = next(c for c in tg.store.iter_nodes("community")
                         if any(e.dst for e in tg.store.edges_of(c.id, "SUMMARY_FOR")))
        graph = Retriever(tg.view, ToG3Config(), None)._expand([(1.0, "community", community.id)])
    assert graph.triples and all(graph.types[t].relation and graph.types[t].subject for t in graph.triples)


@pytest.fixture
def untyped_index(tmp_path: Path) -> Path:
    """Chunks and co-occurring entities, no triplets: the Constructor extracts them on the fly."""
    path = tmp_path / "nolm.db"
    with ThinkGraph(path, settings=Settings(), embedder=HashEmbedder()) as tg:
        tg.index([FIXTURES / "bridge_corpus.jsonl"])
    return path


async def test_the_constructors_extraction_is_typed_in_the_trace_the_evidence_and_the_index(
        untyped_index: Path) -> None:
    reader = Reader()
    reader.backend.rules.insert(0, ("build a small knowledge graph", typed_extraction))
    with ThinkGraph.open(untyped_index, settings=Settings(), embedder=HashEmbedder(), backend=reader.backend) as tg:
        answer = await tg.aask(QUESTION, method="tog3", horizon=1, top_k=2, context_passages=2, write_triplets=True,
                               retrieval="shared")  # (the chunk that holds the triple is reached at once)
        extracted = {tuple(t): types for s in answer.trace if s.action == "extract"
                     for t, types in zip(s.outputs["triples"], s.outputs["types"], strict=True)}
        assert extracted[("Rivertown", "lies in", "Greenland Valley")] == {
            "subject_type": "Place", "relation_type": "Location", "object_type": "Place"}
        assert typed_edge(answer, "lies in")["relation_type"] == "Location"
        written = next(n for n in tg.store.iter_nodes("triplet") if n.props["predicate"] == "lies in")
        assert written.props["relation_type"] == "Location" and written.props["subject_type"] == "Place"
        (rel,) = [e for e in tg.store.iter_edges(["OPENREL"]) if e.props["predicate"] == "lies in"]
        assert rel.props == {"predicate": "lies in", "subject_type": "Place", "relation_type": "Location",
                             "object_type": "Place"}
