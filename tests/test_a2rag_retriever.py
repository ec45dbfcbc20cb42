"""A2RAG's retriever: seeds, the three stages on a graph with known bridges, map-back, degradation."""

from __future__ import annotations

import numpy as np
import pytest

from support import FIXTURES, HashEmbedder
from thinkgraph.api import ThinkGraph
from thinkgraph.config import Settings
from thinkgraph.graph.ppr import personalized_pagerank
from thinkgraph.methods.a2rag import A2RAGConfig, AgenticRetriever
from thinkgraph.methods.a2rag.graph import EntityGraph, build_entity_graph
from thinkgraph.methods.a2rag.stages import bridge_facts, connects, local_facts, ppr_map_back


@pytest.fixture(scope="module")
def bridge_tg(tmp_path_factory: pytest.TempPathFactory) -> ThinkGraph:
    settings = Settings()
    tg = ThinkGraph(tmp_path_factory.mktemp("a2") / "b.db", settings=settings, embedder=HashEmbedder())
    tg.index([FIXTURES / "bridge_corpus.jsonl"], openie=FIXTURES / "bridge_openie.jsonl")
    yield tg
    tg.close()


@pytest.fixture(scope="module")
def graph(bridge_tg: ThinkGraph) -> EntityGraph:
    return build_entity_graph(bridge_tg.view)


def row(graph: EntityGraph, name: str) -> int:
    return graph.names.index(name)


def names(graph: EntityGraph, facts: list) -> set[tuple[str, str, str]]:
    return {(graph.names[f.subject], f.predicate, graph.names[f.object]) for f in facts}


def test_entity_graph_has_facts_with_sources(graph: EntityGraph) -> None:
    founded = [f for f in graph.facts if f.predicate == "founded"]
    assert len(founded) == 1 and founded[0].chunks and len(graph.facts) == 7
    assert graph.degree[row(graph, "Acme Corp")] == 4  # Alice, 1990, Rivertown, Bob


def test_stage1_local_with_and_without_relation_seeds(graph: EntityGraph) -> None:
    acme = row(graph, "Acme Corp")
    facts, filtered = local_facts(graph, [acme], set())
    assert names(graph, facts) == {("Alice Stone", "founded", "Acme Corp"), ("Acme Corp", "founded in", "1990"),
                                   ("Acme Corp", "based in", "Rivertown"), ("Bob Reed", "works at", "Acme Corp")}
    assert not filtered
    facts, filtered = local_facts(graph, [acme], {"works at"})
    assert names(graph, facts) == {("Bob Reed", "works at", "Acme Corp")} and filtered
    facts, filtered = local_facts(graph, [acme], {"married to"})  # nothing matches: keep all
    assert len(facts) == 4 and not filtered


@pytest.mark.parametrize("seed_names", [("Alice Stone", "Carol Diaz"), ("Alice Stone", "Bob Reed"),
                                        ("Alice Stone", "Bob Reed", "Carol Diaz"), ("Alice Stone",), ("Moon", "Earth"),
                                        ("Alice Stone", "Moon")])
def test_stage1_connects_the_seeds_as_networkx_finds_them(graph: EntityGraph, seed_names: tuple[str, ...]) -> None:
    """Stage 1 leaves seeds apart when its facts put them in different components (checked against
    networkx on the stage's own facts)."""
    import networkx as nx

    seeds = [row(graph, n) for n in seed_names]
    facts, _ = local_facts(graph, seeds, set())
    reference = nx.Graph()
    reference.add_nodes_from(seeds)
    reference.add_edges_from((f.subject, f.object) for f in facts)
    expected = len({frozenset(nx.node_connected_component(reference, s)) for s in seeds}) <= 1
    assert connects(facts, seeds) is expected
    assert connects(facts, seeds) is (seed_names in {("Alice Stone", "Bob Reed"), ("Alice Stone",), ("Moon", "Earth")})


def test_stage2_bridges_link_two_seeds(graph: EntityGraph) -> None:
    alice, carol = row(graph, "Alice Stone"), row(graph, "Carol Diaz")
    bridges, paths, facts = bridge_facts(graph, [alice, carol], k=2, max_paths=2, max_bridges=10)
    assert {graph.names[b] for b in bridges} == {"Acme Corp", "Rivertown"}
    assert all(len(p) - 1 <= 2 for p in paths)
    assert names(graph, facts) >= {("Alice Stone", "founded", "Acme Corp"), ("Acme Corp", "based in", "Rivertown"),
                                   ("Carol Diaz", "born in", "Rivertown")}
    assert ("Moon", "orbits", "Earth") not in names(graph, facts)
    assert bridge_facts(graph, [alice], 2, 2, 10) == ([], [], [])  # one seed: no bridge
    bridges1, _, _ = bridge_facts(graph, [alice, carol], k=1, max_paths=2, max_bridges=10)
    assert bridges1 == []  # no node within one hop of both


def test_stage3_degree_normalised_ppr_and_map_back(graph: EntityGraph, bridge_tg: ThinkGraph) -> None:
    acme, carol = row(graph, "Acme Corp"), row(graph, "Carol Diaz")
    top, chunk_scores = ppr_map_back(graph, [acme, carol], alpha=0.15, top_l=3)
    p0 = np.zeros(len(graph.ids))
    p0[acme], p0[carol] = 1 / 4, 1 / 1  # eq. (10): 1/deg, Acme has degree 4, Carol 1
    ref = personalized_pagerank(graph.adjacency, p0 / p0.sum(), damping=0.85)
    assert top == [int(i) for i in np.argsort(-ref, kind="stable")[:3]]
    expected: dict[str, float] = {}
    for node in top:
        for chunk in graph.chunks_of[node]:
            expected[chunk] = expected.get(chunk, 0.0) + float(ref[node])
    assert chunk_scores == pytest.approx(expected)
    docs = {bridge_tg.store.get_node(c).props["doc_id"] for c in chunk_scores}
    assert "c6" not in docs and "c5" in docs


def test_degraded_graph_drops_nodes_and_their_facts(graph: EntityGraph) -> None:
    smaller = graph.degraded(0.5, seed=1)
    assert len(smaller.ids) == len(graph.ids) - round(0.5 * len(graph.ids))
    kept = set(smaller.ids)
    for f in smaller.facts:
        assert smaller.ids[f.subject] in kept and smaller.ids[f.object] in kept
    assert len(smaller.facts) < len(graph.facts)
    assert graph.degraded(0.0, seed=1).facts == graph.facts


async def test_seed_alignment_hybrid_matcher(bridge_tg: ThinkGraph, graph: EntityGraph) -> None:
    retriever = AgenticRetriever(bridge_tg.view, A2RAGConfig(), graph=graph)
    aligner = retriever.aligner
    exact = aligner.align_entity("Alice Stone")
    assert graph.names[exact[0][0]] == "Alice Stone" and exact[0][1] > 0.9
    typo = aligner.align_entity("Alise Stone")
    assert typo and graph.names[typo[0][0]] == "Alice Stone"
    assert aligner.align_entity("Quantum Zebra Parliament") == []
    assert "founded" in aligner.align_relation("founded")
    seeds = await aligner.seeds("Where was the company that Alice Stone founded based?")
    assert [graph.names[r] for r in seeds.entities] == ["Alice Stone"]


async def test_a_year_the_question_names_qualifies_the_answer_and_is_no_seed(bridge_tg: ThinkGraph,
                                                                             graph: EntityGraph) -> None:
    question = "Where is the company Alice Stone founded in 1990 based?"
    retriever = AgenticRetriever(bridge_tg.view, A2RAGConfig(), graph=graph)
    state = await retriever.retrieve(question)
    assert [graph.names[r] for r in state.seeds.entities] == ["Alice Stone"] and state.seeds.values == ["1990"]
    assert state.trace[0].outputs["values"] == ["1990"]
    keeping = AgenticRetriever(bridge_tg.view, A2RAGConfig(value_seeds=True), graph=graph)
    with_values = await keeping.aligner.seeds(question)
    assert {graph.names[r] for r in with_values.entities} == {"Alice Stone", "1990"} and with_values.values == []
    only_a_year = await retriever.aligner.seeds("What was founded in 1990?")
    assert [graph.names[r] for r in only_a_year.entities] == ["1990"]  # no name to start from: the year stays


async def test_all_stages_run_without_llm_and_record_the_stage(bridge_tg: ThinkGraph, graph: EntityGraph) -> None:
    retriever = AgenticRetriever(bridge_tg.view, A2RAGConfig(), graph=graph)
    state = await retriever.retrieve("Alice Stone and Carol Diaz")
    assert state.stage == "ppr" and set(state.stage_chunks) == {"local", "bridge", "ppr"}
    assert [s.action for s in state.trace] == ["seeds", "stage.local", "stage.bridge", "stage.ppr"]
    ranked = state.ranked_chunks()
    assert len(ranked) == len(set(ranked))
    docs = [bridge_tg.store.get_node(c).props["doc_id"] for c in ranked]
    assert {"c1", "c5", "c2"} <= set(docs) and "c6" not in docs[:4]


async def test_stage3_fills_a_map_back_set_of_an_isolated_seed_with_the_passages_nearest_the_query(
        bridge_tg: ThinkGraph, graph: EntityGraph) -> None:
    question = "What does the Moon orbit?"  # Moon -- Earth is a component of its own: one chunk maps back
    alone = await AgenticRetriever(bridge_tg.view, A2RAGConfig(stage3_fill=False), graph=graph).retrieve(question)
    doc = {c: bridge_tg.store.get_node(c).props["doc_id"] for c in bridge_tg.view.vectors("chunk").ids}
    assert [doc[c] for c in alone.stage_chunks["ppr"]] == ["c6"]
    filled = await AgenticRetriever(bridge_tg.view, A2RAGConfig(), graph=graph).retrieve(question)
    ppr = filled.stage_chunks["ppr"]
    nearest = [c for c, _ in bridge_tg.view.vectors("chunk").search(bridge_tg.view.embed_query(question), 6)]
    assert doc[ppr[0]] == "c6" and len(ppr) == 5 and ppr[1:] == [c for c in nearest if doc[c] != "c6"][:4]
    assert filled.trace[-1].outputs["text_fill"] == 4 and filled.trace[-1].outputs["chunks"] == 1


async def test_no_seed_falls_back_to_dense_text(bridge_tg: ThinkGraph, graph: EntityGraph) -> None:
    retriever = AgenticRetriever(bridge_tg.view, A2RAGConfig(), graph=graph)
    state = await retriever.retrieve("quantum chromodynamics lecture")
    assert state.seeds.entities == {} and state.facts == []
    assert state.trace[-1].outputs["dense_fallback"] is True and len(state.stage_chunks["ppr"]) == 6


class TextCountingEmbedder(HashEmbedder):
    """Counts how often each text is embedded."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: dict[str, int] = {}

    def embed(self, texts: list[str]) -> np.ndarray:
        for text in texts:
            self.texts[text] = self.texts.get(text, 0) + 1
        return super().embed(texts)


def test_relation_predicates_embedded_once_per_index_revision(tmp_path, monkeypatch) -> None:
    """The relation vocabulary is embedded once (by `index`, kept in the view cache), not per question;
    nodes are counted once per revision, not per question."""
    embedder = TextCountingEmbedder()
    with ThinkGraph(tmp_path / "r.db", settings=Settings(), embedder=embedder) as tg:
        tg.index([FIXTURES / "bridge_corpus.jsonl"], openie=FIXTURES / "bridge_openie.jsonl")
        predicates = tg.view.relation_vectors[0]
        assert "founded" in predicates and "works at" in predicates
        indexed = {p: embedder.texts.get(p, 0) for p in predicates}
        counts: list[int] = []
        original = tg.store.count_nodes
        monkeypatch.setattr(tg.store, "count_nodes", lambda: counts.append(1) or original())
        for question in ("Where was the company that Alice Stone founded based?", "Who works at Acme Corp?",
                         "Where was Carol Diaz born?"):
            answer = tg.retrieve(question, "a2rag")
            assert answer.citations
        assert {p: embedder.texts.get(p, 0) for p in predicates} == indexed  # no predicate embedded again
        assert len(counts) <= 1
    with ThinkGraph.open(tmp_path / "r.db", settings=Settings(), embedder=TextCountingEmbedder()) as reopened:
        assert list(reopened.view.relation_vectors[0]) == list(predicates)  # read from the view cache
        assert not any(p in reopened.embedder.texts for p in predicates)


@pytest.mark.parametrize("max_seeds, added", [(8, ["Acme Corp", "Rivertown"]), (2, ["Acme Corp"])])
async def test_what_an_abstaining_draft_reached_joins_the_seeds_once_within_max_seeds(
        bridge_tg: ThinkGraph, graph: EntityGraph, max_seeds: int, added: list[str]) -> None:
    """After stage 1 judges insufficient with names in its state (the draft judge sets them), the reached
    entities the seeds lack join them, each once and up to ``max_seeds`` in all, and stage 3 walks from
    them too; a name the index lacks links nothing."""
    retriever = AgenticRetriever(bridge_tg.view, A2RAGConfig(max_seeds=max_seeds), graph=graph)
    names = ["Acme Corp", "Alice Stone", "Rivertown", "Acme Corp", "Atlantis"]

    async def judge(state) -> bool:  # noqa: ANN001
        state.reached = list(names) if state.stage == "local" else []
        return False

    state = await retriever.retrieve("Where did Alice Stone work?", judge=judge)
    reached = next(s for s in state.trace if s.action == "seeds.reached")
    assert reached.outputs["entities"] == added  # Alice Stone is a seed already; Atlantis is no entity
    seeds = [s.inputs["seeds"] for s in state.trace if s.action.startswith("stage.")]
    assert seeds == [1, 1 + len(added), 1 + len(added)]  # the bridge stage and stage 3 start from them too
    assert sorted(graph.names[r] for r in state.seeds.entities) == sorted(["Alice Stone", *added])



def _meeting_corpus(tmp_path) -> tuple[ThinkGraph, dict[str, str]]:
    import json

    docs = [("m1", "Meeting", "Ann Lee met Tom Fox in Paris."),
            ("m2", "Ann Lee", "Ann Lee wrote River Song, a novel about rivers, and lived in Oslo."),
            ("m3", "Tom Fox", "Tom Fox sailed to Oslo in a boat."), ("m4", "Oslo", "Oslo is a port city.")]
    (tmp_path / "c.jsonl").write_text("\n".join(json.dumps({"id": i, "title": t, "text": x}) for i, t, x in docs))
    triples = [("m1", [["Ann Lee", "met", "Tom Fox"], ["Tom Fox", "visited", "Paris"]]),
               ("m2", [["Ann Lee", "wrote", "River Song"], ["Ann Lee", "lived in", "Oslo"]]),
               ("m3", [["Tom Fox", "sailed to", "Oslo"]]), ("m4", [])]
    (tmp_path / "o.jsonl").write_text("\n".join(json.dumps({"doc_id": i, "triples": t, "entities": sorted(
        {x for s, _, o in t for x in (s, o)}) or ["Oslo"]}) for i, t in triples))
    tg = ThinkGraph(tmp_path / "m.db", settings=Settings(), embedder=HashEmbedder())
    tg.index([tmp_path / "c.jsonl"], openie=tmp_path / "o.jsonl")
    return tg, {c: tg.store.get_node(c).props["doc_id"] for c in tg.view.vectors("chunk").ids}


def _by_text(tg: ThinkGraph, chunk_ids: list[str], question: str, words: str) -> list[str]:
    """The stage order computed apart: dense cosine to the question and BM25 of ``words``, fused."""
    from thinkgraph.retrieval.fusion import hybrid_scores
    from thinkgraph.retrieval.hybrid import HYBRID_DENSE_WEIGHT

    chunks = tg.view.vectors("chunk")
    rows = [chunks.position[c] for c in chunk_ids]
    dense = chunks.cosines(chunk_ids, tg.view.embed_query(question))
    fused = hybrid_scores(dense, tg.view.lexical("chunk").scores(words)[rows], HYBRID_DENSE_WEIGHT)
    return [c for _, c in sorted(zip(-fused, chunk_ids, strict=True))]


async def test_stage_chunks_rank_by_the_hybrid_text_score_with_the_names_a_draft_reached(tmp_path) -> None:
    """Stages 1-2 order their chunks by BM25 and dense cosine fused (``stage_chunk_order="text"``), BM25
    reading the names an abstaining draft reached too; "cosine" keeps the dense order alone."""
    tg, doc = _meeting_corpus(tmp_path)
    with tg:
        question = "Whom did Tom Fox meet, and what did that person write?"
        reached: list[list[str]] = [["River Song"]]

        async def abstains(state) -> bool:
            state.reached = reached.pop() if reached else []
            return False

        state = await AgenticRetriever(tg.view, A2RAGConfig()).retrieve(question, judge=abstains)
        assert state.trace[0].outputs["entities"] == ["Tom Fox"]
        local, bridge = state.stage_chunks["local"], state.stage_chunks["bridge"]
        assert sorted(doc[c] for c in local) == ["m1", "m3"] and "m2" in {doc[c] for c in bridge}
        assert local == _by_text(tg, local, question, question)
        assert bridge == _by_text(tg, bridge, question, question + " River Song")
        assert bridge != _by_text(tg, bridge, question, question)  # the reached name's words count
        dense = await AgenticRetriever(tg.view, A2RAGConfig(stage_chunk_order="cosine")).retrieve(question)
        cosine = tg.view.vectors("chunk").cosines(dense.stage_chunks["local"], tg.view.embed_query(question))
        assert list(cosine) == sorted(cosine, reverse=True)
        # the [retrieval] settings' lexical switch holds here too: without BM25 the text score is the dense one
        from thinkgraph.config import RetrievalSettings

        reached.append(["River Song"])
        unlexical = await AgenticRetriever(tg.view, A2RAGConfig(), walk_settings=RetrievalSettings(lexical=False)) \
            .retrieve(question, judge=abstains)
        by_cosine = unlexical.stage_chunks["bridge"]
        cosine = tg.view.vectors("chunk").cosines(by_cosine, tg.view.embed_query(question))
        assert list(cosine) == sorted(cosine, reverse=True) and by_cosine != bridge and set(by_cosine) == set(bridge)
