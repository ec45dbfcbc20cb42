"""Where the shared walk that fills kgr's reader restarts (methods/kgr/fill.py ``chain_seeds``): at the
entities the chain touched, or, when it touched none, at those the passages it read mention."""

from __future__ import annotations

from typing import cast

from thinkgraph.methods.kgr.fill import MENTIONS, chain_seeds
from thinkgraph.methods.kgr.grounding import PASSAGE_TYPE
from thinkgraph.models import Node
from thinkgraph.typedkg import TypedGraph


class Mentions:
    """A corpus-built graph's passage -> entity edges, and nothing else."""

    def __init__(self, mentions: dict[str, list[str]]) -> None:
        self.names = sorted({*mentions, *(e for es in mentions.values() for e in es)})
        self.mentions = mentions

    def lookup(self, ext: str) -> int | None:
        return self.names.index(ext) if ext in self.names else None

    def ext_id(self, node: int) -> str:
        return self.names[node]

    def neighbors(self, node: int, edge_type: str) -> list[int]:
        assert edge_type == MENTIONS
        return [self.names.index(e) for e in self.mentions.get(self.names[node], [])]


GRAPH = cast(TypedGraph, Mentions({"chunk:1": ["ent:alice", "ent:acme"], "chunk:2": ["ent:acme", "ent:river"]}))


def test_the_walk_restarts_at_the_entities_the_chain_touched_in_its_order() -> None:
    nodes = [Node("chunk:1", PASSAGE_TYPE, "p"), Node("ent:river", "entity", "River"),
             Node("ent:alice", "entity", "Alice"), Node("ent:river", "entity", "River")]
    assert chain_seeds(GRAPH, nodes) == ["ent:river", "ent:alice"]


def test_a_chain_that_read_passages_alone_restarts_at_what_they_mention() -> None:
    nodes = [Node("chunk:2", PASSAGE_TYPE, "p"), Node("chunk:1", PASSAGE_TYPE, "p"), Node("chunk:9", PASSAGE_TYPE, "p")]
    assert chain_seeds(GRAPH, nodes) == ["ent:acme", "ent:river", "ent:alice"]
    assert chain_seeds(GRAPH, []) == []
