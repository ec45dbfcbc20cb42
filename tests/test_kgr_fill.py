"""What fills kgr's reader past the passages its chain reached (``reader_fill``, methods/kgr/fill.py and
grounding.py): where the shared walk restarts (at the entities the chain touched, or, when it touched
none, at those the passages it read mention), what the reader is shown under each fill, and the former
switch ``reader_neighbourhood``."""

from __future__ import annotations

import re
from typing import cast

import pytest

from test_reader_methods import QUESTION, prompt_of, reader_reply
from thinkgraph.config import Settings
from thinkgraph.errors import ConfigError
from thinkgraph.methods import catalog
from thinkgraph.methods.kgr.config import KGRConfig
from thinkgraph.methods.kgr.fill import MENTIONS, chain_seeds
from thinkgraph.methods.kgr.grounding import PASSAGE_TYPE
from thinkgraph.methods.reader import READER_INSTRUCTION
from thinkgraph.models import Node
from thinkgraph.testing import ScriptedBackend
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


BRIDGE_SHOWN = ["Alice Stone: Alice Stone founded Acme Corp in 1990.", "Acme Corp: Acme Corp is based in Rivertown."]


@pytest.mark.parametrize("relevance", ["text", "cosine"])
@pytest.mark.parametrize("fill, shown", [("walk", BRIDGE_SHOWN), ("relations", BRIDGE_SHOWN),
                                         ("none", BRIDGE_SHOWN[:1])])
async def test_kgr_reads_past_where_the_chain_stopped(open_bridge, fill: str,  # noqa: ANN001
                                                                   shown: list[str], relevance: str) -> None:
    """The chain touches Alice Stone only and finishes on the bridge (Finish[Acme Corp]). Its own passage
    leaves room, filled (``reader_fill``) by the shared walk restarted at Alice Stone, or with the passages
    of the entities one relation away (Acme Corp's: c2, c4), the nearest the question first: with two
    passages to read, the reader is shown c1 and c2, and answers the last hop, whether nearest is read by
    the text score or by cosine (``reader_relevance``). ``reader_fill="none"`` reads the chain's passage
    alone."""
    finish = "Thought: she founded it.\nAction: Finish[Acme Corp]"  # (asked again once: no observation says it)
    backend = ScriptedBackend(script=["Thought: find her.\nAction: RetrieveNode[Alice Stone]", finish, finish],
                              rules=[(READER_INSTRUCTION, reader_reply)])
    tg = open_bridge(backend)
    answer = await tg.aask(QUESTION, "kgr", reader_passages=2, reader_fill=fill, reader_relevance=relevance)
    final = prompt_of(backend.requests[-1])
    passages = re.findall(r"^\[\d+\] (.*)$", final.split("Passages:", 1)[1], re.MULTILINE)
    assert passages == shown
    assert answer.status == ("abstained" if fill == "none" else "answered")
    assert answer.stats["reader_fill"] == fill
    assert answer.text == ("Unknown" if fill == "none" else "Rivertown")


@pytest.mark.parametrize(("former", "fill"), [(True, "relations"), ("false", "none"), (False, "none")])
def test_the_former_neighbourhood_switch_reads_as_its_fill(former: object, fill: str) -> None:
    assert KGRConfig.model_validate({"reader_neighbourhood": former}).reader_fill == fill


@pytest.mark.parametrize(("options", "says"), [
    ({"reader_neighbourhood": "maybe"},
     "kgr options: reader_neighbourhood (now reader_fill) is true or false, not 'maybe'"),
    ({"reader_neighbourhood": "false", "reader_fill": "walk"},
     "kgr options: reader_neighbourhood is the former name of reader_fill: give one of them"),
])
def test_the_former_switch_misused_is_a_one_line_error_naming_it(options: dict[str, object], says: str) -> None:
    with pytest.raises(ConfigError) as raised:
        catalog.get("kgr").make_config(Settings(), options)
    assert str(raised.value) == says


async def test_the_walk_reaches_the_passage_two_relations_past_the_chain(open_bridge) -> None:  # noqa: ANN001
    """A three-hop question whose chain stops at Alice Stone: the valley is named in Rivertown's passage,
    two relations past her (Alice Stone -> Acme Corp -> Rivertown). The walk's fill reaches it; the
    relations' fill (Acme Corp's passages) cannot."""
    question = "In which valley is the town where the company Alice Stone founded is based?"
    finish = "Thought: she founded it.\nAction: Finish[Acme Corp]"
    shown = {}
    for fill in ("walk", "relations"):
        backend = ScriptedBackend(script=["Thought: find her.\nAction: RetrieveNode[Alice Stone]", finish, finish],
                                  rules=[(READER_INSTRUCTION, "Answer: Unknown")])
        await open_bridge(backend).aask(question, "kgr", reader_passages=3, reader_fill=fill)
        final = prompt_of(backend.requests[-1])
        shown[fill] = re.findall(r"^\[\d+\] (\w[\w ]*):", final.split("Passages:", 1)[1], re.MULTILINE)
    assert shown["walk"][0] == shown["relations"][0] == "Alice Stone"  # the chain's own passage first
    assert "Rivertown" in shown["walk"] and "Rivertown" not in shown["relations"]
