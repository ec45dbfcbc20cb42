"""ToG-3's Retriever in its two forms (``retrieval``): "shared" ranks the passages with the project's
walk over entities and passages (as `ppr`), "paper" is the literal vector search over every node
type expanded through the graph. Neither ends by blending its ranking with another method's, and
``stats["variant"]`` and the trace say which ran."""

from __future__ import annotations

import pytest

from thinkgraph.errors import ConfigError
from thinkgraph.methods.base import MethodContext
from thinkgraph.methods.run import run_method
from thinkgraph.methods.tog3 import ToG3Config, ToG3Method
from thinkgraph.methods.tog3.agents import Retriever
from thinkgraph.models import Answer, NodeType
from thinkgraph.retrieval.graph import GraphRetriever, Ranking
from thinkgraph.testing import ScriptedBackend

# Three hops: Alice Stone -> (c1) Acme Corp -> (c2) Rivertown -> (c3) Greenland Valley. The bridge
# passage c2 ("Acme Corp is based in Rivertown.") shares no name with the question.
QUESTION = "In which valley lies the town where the company founded by Alice Stone is based?"


def docs(answer: Answer) -> list[str]:
    return [c.doc_id for c in answer.citations]


def retrieve_step(answer: Answer):  # noqa: ANN201
    (step,) = [s for s in answer.trace if s.action == "retrieve"]
    return step


async def test_the_shared_retriever_reaches_the_bridge_passage_that_dense_misses(open_bridge) -> None:  # noqa: ANN001
    tg = open_bridge(None)
    shared = await tg.aretrieve(QUESTION, "tog3", top_k=2, retrieval="shared")
    assert docs(shared) == ["c1", "c2"]  # the first hop, then the bridge the walk reaches through Acme Corp
    assert "c2" not in docs(await tg.aretrieve(QUESTION, "naive", top_k=2))  # dense alone: c3, c1
    assert "c2" not in docs(await tg.aretrieve(QUESTION, "hybrid", top_k=2))
    assert docs(shared) == docs(await tg.aretrieve(QUESTION, "ppr", top_k=2))  # the same walk as ppr
    step = retrieve_step(shared)
    assert step.inputs["retrieval"] == "shared" and step.inputs["keywords"] == []
    assert step.outputs["walk"]["seeds"][0] == "Alice Stone"  # the question's linked entity seeds it
    assert "Acme Corp" in step.outputs["walk"]["seeds"]  # a bridge entity of the second round
    # triplet nodes come from vector search beside the walk's passages
    assert any(n.startswith("tri:") for n in step.outputs["top_nodes"])
    paper = await tg.aretrieve(QUESTION, "tog3", top_k=2, retrieval="paper")
    assert "c2" not in docs(paper) and "walk" not in retrieve_step(paper).outputs


async def test_the_walk_is_fed_the_query_and_its_keywords(open_bridge, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    asked: list[str] = []
    original = GraphRetriever.passage_ranking

    def spy(self: GraphRetriever, question: str, query_vec) -> Ranking:  # noqa: ANN001
        asked.append(question)
        return original(self, question, query_vec)

    monkeypatch.setattr(GraphRetriever, "passage_ranking", spy)
    tg = open_bridge(ScriptedBackend(rules=[("Give up to", "KEYWORDS: Acme Corp^firm")]))
    retriever = Retriever(tg.view, ToG3Config(retrieval="shared"), tg.llm)
    graph = await retriever.retrieve("Where is the company based?", [])
    assert asked == ["Where is the company based? Acme Corp firm"]
    assert tg.store.get_node(graph.passages[0]).props["doc_id"] in {"c1", "c2", "c4"}  # Acme Corp's passages


async def test_the_paper_switch_is_the_literal_retriever(open_bridge) -> None:  # noqa: ANN001
    """The paper form as it was before the shared form existed (``fill_passages=False`` since issue 47):
    the top nodes of every type by vector search, expanded through the graph, the passages reranked by
    cosine to the query. The default fills the passages to App. A's 5 with the chunks nearest the query,
after the expansion's own."""
    tg = open_bridge(None)
    node_doc = {n.id: n.props.get("doc_id") for n in tg.store.iter_nodes(NodeType.CHUNK)}
    trace: list = []
    graph = await Retriever(tg.view, ToG3Config(retrieval="paper", fill_passages=False), None).retrieve(
        QUESTION, trace)
    assert [node_doc[c] for c in graph.passages] == ["c3", "c1", "c6"]
    assert graph.triples == [("Rivertown", "lies in", "Greenland Valley"), ("Alice Stone", "founded", "Acme Corp"),
                             ("Acme Corp", "founded in", "1990"), ("Moon", "orbits", "Earth")]
    top = trace[0].outputs["top_nodes"]
    assert [n.split(":")[0] for n in top] == ["chunk", "chunk", "tri", "tri", "chunk"] and not graph.communities
    vec = tg.view.embed_query(QUESTION)
    chunks = tg.view.vectors(NodeType.CHUNK)
    cosines = [float(chunks.vectors[chunks.position[c]] @ vec) for c in graph.passages]
    assert cosines == sorted(cosines, reverse=True)  # the Reranker: cosine to the query
    wide = await Retriever(tg.view, ToG3Config(retrieval="paper", top_k=10, context_passages=10,
                                               fill_passages=False), None).retrieve(QUESTION, trace)
    assert [node_doc[c] for c in wide.passages] == ["c3", "c1", "c6", "c2"]
    assert len(wide.communities) == 2 and wide.triples[4:] == [
        ("Acme Corp", "based in", "Rivertown"), ("Bob Reed", "works at", "Acme Corp"),
        ("Carol Diaz", "born in", "Rivertown")]
    # the default: the same top nodes and triples, the passages filled to 5 (the bridge c2 among them): the
    # expansion's own passages first, in the Reranker's order, then the nearest chunks it did not reach
    filled = await Retriever(tg.view, ToG3Config(retrieval="paper"), None).retrieve(QUESTION, [])
    assert [node_doc[c] for c in filled.passages] == ["c3", "c1", "c6", "c2", "c5"]
    assert filled.passages[:3] == graph.passages and filled.triples == graph.triples
    # nothing to fill: the expansion's passages stand alone, not displaced by nearer chunks
    one = await Retriever(tg.view, ToG3Config(retrieval="paper", context_passages=2), None).retrieve(QUESTION, [])
    assert one.passages == graph.passages[:2]


@pytest.mark.parametrize("form", ["shared", "paper"])
async def test_the_evidence_is_the_retrievers_own_ranking_never_blended(open_bridge, form: str) -> None:  # noqa: ANN001
    tg = open_bridge(None)
    answer = await tg.aretrieve(QUESTION, "tog3", top_k=2, retrieval=form)
    own = {str(n.props["doc_id"]) for n in answer.evidence.nodes if n.type == "chunk"}
    assert own == set(docs(answer))  # the cited passages are the Retriever's subgraph's
    node_doc = {n.id: n.props.get("doc_id") for n in tg.store.iter_nodes(NodeType.CHUNK)}
    alone = await Retriever(tg.view, ToG3Config(retrieval=form, top_k=2), None).retrieve(QUESTION, [])
    ranked = [node_doc[c] for c in alone.passages]
    assert docs(answer) and docs(answer) == ranked[: len(docs(answer))]  # the Retriever's own order, nothing added
    hybrid = docs(await tg.aretrieve(QUESTION, "hybrid", top_k=2))
    assert docs(answer) != hybrid  # (the removed 50/50 blend with BM25 + dense pulled it toward this)


@pytest.mark.parametrize(("form", "communities"), [("shared", True), ("shared", False), ("paper", True),
                                                   ("paper", False)])
async def test_the_variant_says_what_ran(open_bridge, form: str, communities: bool) -> None:  # noqa: ANN001
    tg = open_bridge(None)
    answer = await tg.aretrieve(QUESTION, "tog3", retrieval=form, use_communities=communities)
    variant = answer.stats["variant"]
    assert variant.startswith("no LLM: Retriever only") and f"retrieval={form}:" in variant
    assert "no keywords" in variant and variant.count("PPR walk") == (form == "shared")
    assert ("no communities" in variant) is not communities
    assert retrieve_step(answer).inputs["retrieval"] == form


async def test_the_macer_variant_names_the_form_and_the_keywords(open_bridge) -> None:  # noqa: ANN001
    backend = ScriptedBackend(rules=[("Give up to", "Alice Stone^Acme Corp"),
                                     ("Judge whether", '{"reason": "all hops", "verdict": "yes"}'),
                                     ("Answer the query using only", "Greenland Valley"),
                                     ("numbered passages below", "Greenland Valley [1]")])  # the one reader
    tg = open_bridge(backend)
    method = ToG3Method(MethodContext(tg.store, tg.view, tg.settings, tg.llm),
                        ToG3Config(use_communities=False, retrieval="shared"))
    answer = await run_method(method, QUESTION)
    assert answer.stats["variant"].startswith("MACER loop, horizon 3 (retrieval=shared:")
    assert "keyword expansion; no communities" in answer.stats["variant"]
    assert retrieve_step(answer).inputs["keywords"] == ["Alice Stone", "Acme Corp"]


async def test_with_the_shared_form_macer_has_the_bridge_at_round_zero(open_bridge) -> None:  # noqa: ANN001
    """With four passages per subgraph the walk puts all three hops in G_0, and the Reflector finds
    the context sufficient at once; the paper form as it was (the top nodes' expansion alone,
    ``fill_passages=False``) needs an evolution to reach the bridge. Filled with the nearest chunks (the
    default since issue 47) the paper form has it at round zero too."""
    from test_tog3_evidence import Reader

    outcomes = {}
    forms = {"shared": {"retrieval": "shared"}, "paper": {"retrieval": "paper", "fill_passages": False},
             "paper_filled": {"retrieval": "paper"}}
    for form, options in forms.items():
        tg = open_bridge(Reader().backend)
        config = ToG3Config(top_k=4, context_passages=4, **options)
        answer = await run_method(ToG3Method(MethodContext(tg.store, tg.view, tg.settings, tg.llm), config), QUESTION)
        assert answer.text == "Greenland Valley" and answer.stats["outcome"] == "sufficient"
        assert {c.doc_id for c in answer.citations} == {"c2", "c3"}
        outcomes[form] = answer.stats["evolutions"]
    assert outcomes == {"shared": 0, "paper": 1, "paper_filled": 0}


async def test_an_unknown_retrieval_form_is_refused_in_one_line(open_bridge) -> None:  # noqa: ANN001
    tg = open_bridge(None)
    with pytest.raises(ConfigError, match="retrieval"):
        await tg.aretrieve(QUESTION, "tog3", retrieval="walk")
    assert ToG3Config().retrieval == "paper"  # App. A's Retriever by default


@pytest.mark.parametrize("form", ["paper", "shared"])
async def test_each_keyword_is_matched_on_its_own_too(open_bridge, form: str) -> None:  # noqa: ANN001
    """A keyword names what the question does not: a node it matches on its own is retrieved even
    where the one embedding of question and keywords together does not reach it."""
    question = "Which company did Alice Stone found?"
    tg = open_bridge(ScriptedBackend(rules=[("Give up to", "KEYWORDS: Moon^Earth")]))
    retriever = Retriever(tg.view, ToG3Config(top_k=3, retrieval=form), tg.llm)
    trace: list = []
    await retriever.retrieve(question, trace)
    combined = Retriever(tg.view, ToG3Config(top_k=3, retrieval=form), None)  # no keywords
    top_nodes = trace[0].outputs["top_nodes"]
    moon = {n.id for n in tg.store.iter_nodes("triplet") if "Moon" in n.text} | \
        {n.id for n in tg.store.iter_nodes("chunk") if "Moon" in n.text}
    assert moon & set(top_nodes), top_nodes  # reached through the keyword "Moon" alone
    baseline: list = []
    await combined.retrieve(question, baseline)
    assert not moon & set(baseline[0].outputs["top_nodes"])  # the question alone does not reach it
