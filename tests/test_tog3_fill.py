"""What fills tog3's final reader past its subgraphs' passages (``reader_fill``, methods/tog3/fill.py), and
the shared pieces every reader's fill uses (retrieval/fusion.py ``filled``, retrieval/seeded_walk.py
``rank_weighted`` and ``walked_passages``)."""

from __future__ import annotations

import re

import pytest

from test_tog3_evidence import BASED, QUESTION, Reader, run_method, tog3
from thinkgraph.retrieval.fusion import filled
from thinkgraph.retrieval.seeded_walk import rank_weighted, walked_passages


@pytest.mark.parametrize("fill", ["walk", "none"])
async def test_tog3s_reader_reads_where_the_walk_from_its_passages_leads(open_bridge, fill: str) -> None:  # noqa: ANN001
    """Without evolution the Retriever's one subgraph holds Alice Stone's passage alone (c1); with room for
    three, the walk restarted at what c1 mentions (Alice Stone, Acme Corp, 1990) gives the reader Acme
    Corp's passages (c2, where it is based, and c4), past the subgraph; ``reader_fill="none"`` reads c1."""
    reader = Reader()
    tg = open_bridge(reader.backend)
    answer = await run_method(tog3(tg, top_k=1, context_passages=3, evolve_query=False, retrieval="paper",
                                   reader_fill=fill), QUESTION)
    shown = re.findall(r"^\[\d+\] (.*)$", reader.prompts["final"][0], re.MULTILINE)
    step = next(s for s in answer.trace if s.action == "tog3.final")
    walked = [tg.store.get_node(c).props["doc_id"] for c in step.inputs.get("walked", [])]
    assert f"reader_fill={fill}" in answer.stats["variant"] and ("walked" in step.inputs) is (fill == "walk")
    if fill == "walk":
        assert shown[0].startswith("Alice Stone:") and any(BASED in p for p in shown) and len(shown) == 3
        assert walked[0] == "c2" and set(walked) == {"c2", "c4"}
        assert "c2" in {n.props.get("doc_id") for n in answer.evidence.nodes if n.type == "chunk"}
    else:
        assert [p.split(":")[0] for p in shown] == ["Alice Stone"] and walked == []


@pytest.mark.parametrize("own, walked, limit, share, expected", [
    (["a", "b", "c", "d", "e"], ["x", "b", "y"], 5, 2, ["a", "x", "y", "b", "c"]),  # the walk's b: own's place
    (["a", "b", "c", "d", "e"], ["x", "y", "z"], 5, 2, ["a", "x", "y", "b", "c"]),
    (["a", "b", "c"], ["x", "y", "z"], 5, 2, ["a", "x", "y", "b", "c"]),  # room left: the walk fills it
    (["a", "b", "c", "d", "e"], ["x"], 5, 2, ["a", "x", "b", "c", "d"]),  # too few walked: own's next fill in
    (["a", "b", "c", "d"], [], 3, 2, ["a", "b", "c"]),  # nothing walked: own as before
    (["a", "b"], ["x", "y"], 2, 2, ["a", "x"]),  # own's first always stays
    ([], ["x", "y"], 2, 1, ["x", "y"]),
    (["a", "b", "c"], ["x"], 3, 0, ["a", "b", "c"]),  # share 0: the walk only fills room
    (["a", "b", "c"], ["x", "x", "y", "a"], 3, 5, ["a", "x", "y"]),  # share above the limit; repeats once
    (["a", "b", "c"], ["x"], 0, 2, []),  # no room at all
])
def test_filled_gives_the_walk_its_share_after_owns_first_item(own: list[str], walked: list[str], limit: int,
                                                               share: int, expected: list[str]) -> None:
    assert filled(own, walked, limit, share) == expected


def test_rank_weighted_seeds_each_entity_at_its_first_items_rank() -> None:
    mentions = {"p1": ["e1", "e2"], "p2": ["e2", "e3"], "p3": ["e4"]}
    assert rank_weighted(["p1", "p2", "p3"], mentions.__getitem__, 2) == {"e1": 1.0, "e2": 1.0, "e3": 0.25,
                                                                          "e4": 1 / 9}
    assert rank_weighted(["p1", "p2"], mentions.__getitem__, 0) == {"e1": 1.0, "e2": 1.0, "e3": 1.0}


def test_walked_passages_ignore_unknown_seeds_and_rank_by_the_walk(open_bridge) -> None:  # noqa: ANN001
    tg = open_bridge(None)
    view = tg.view
    entity = {n.text: n.id for n in view.store.iter_nodes("entity")}
    query = view.embed_query("Where is Acme Corp based?")
    assert walked_passages(view, tg.settings.retrieval, {"ent:unknown": 1.0}, "q", query, 5) == []
    ids = walked_passages(view, tg.settings.retrieval, {entity["Acme Corp"]: 1.0}, "Where is Acme Corp based?",
                          query, 6)
    docs = [tg.store.get_node(c).props["doc_id"] for c in ids]
    # the passages that mention Acme Corp first (c1, c2, c4), the ones one entity further after them
    assert set(docs[:3]) == {"c1", "c2", "c4"} and docs[-1] == "c6"  # the Moon's passage shares nothing
