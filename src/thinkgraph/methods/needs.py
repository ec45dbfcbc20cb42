"""What a method reads that the index lacks, said in one line each: what the method runs without, and
the command that builds it (or, where the paper builds it on the fly, that it does). The catalog
record says what each method reads (``reads``, less what a setting switches off); the run envelope
puts these lines in the answer's message and ``stats["index_lacks"]``, which the command line and the
page show. A missing part that no method can do without is an error elsewhere (tog3's communities:
index/stages.py; topg with neither propositions nor triplets: methods/topg)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path

from thinkgraph.methods.catalog import IndexPart
from thinkgraph.models import NodeType
from thinkgraph.retrieval.views import IndexView

LLM_TRIPLETS = "`thinkgraph index DOCS --extractor llm` (or precomputed OpenIE: --openie FILE)"


def _count(view: IndexView, node_type: str) -> int:
    """Counted once per revision of the index (the view's), not once per question: a count of every
    node costs seconds at a million passages."""
    return int(view.node_counts.get(node_type, 0))


def _imported_typed_graph(view: IndexView) -> bool:
    """Whether a typed graph was imported (kgr builds one from the index itself when none was)."""
    meta = Path(f"{view.store.path}.kg") / "meta.json"
    try:
        source = json.loads(meta.read_text(encoding="utf-8")).get("source", {})
    except (OSError, ValueError):
        return False
    return isinstance(source, dict) and source.get("kind") not in (None, "index")


# (method, part) -> (whether the index has it, the line that says what runs instead)
_CHECKS: Mapping[tuple[str, IndexPart], tuple[Callable[[IndexView], bool], str]] = {
    ("tog3", IndexPart.TRIPLETS): (
        lambda s: _count(s, NodeType.TRIPLET) > 0,
        "tog3 finds no triplet nodes here: this index has none, so its subgraphs start as passages (and "
        "communities); with an LLM its Constructor extracts triplets on the fly from the chunks it reaches "
        "(ToG-3 §3.3); "
        f"to have them from the start, build with {LLM_TRIPLETS}"),
    ("a2rag", IndexPart.TRIPLETS): (
        lambda s: _count(s, NodeType.TRIPLET) > 0,
        "a2rag walks co-occurrence links here, not relations: this index has no triplets, so relation seeds "
        f"match nothing; build them with {LLM_TRIPLETS}"),
    ("a2rag", IndexPart.SUMMARIES): (
        lambda s: _count(s, NodeType.DOCUMENT) > 0,
        "a2rag's gate is open: this index has no document summaries (an imported typed graph has no "
        "documents); index documents to have them"),
    ("topg", IndexPart.PROPOSITIONS): (
        lambda s: _count(s, NodeType.PROPOSITION) > 0,
        "topg reads the index's triplets as its propositions (ToPG's OpenIE variant): this index has no "
        "propositions; build them with `thinkgraph index DOCS --extractor propositions`"),
    ("kgr", IndexPart.TYPED_KG): (
        _imported_typed_graph,
        "kgr reasons over this index's own graph (entities, relations, passages) as a typed graph: no typed "
        "graph was imported; import one with `thinkgraph index --kg graph.json`"),
}

def index_lacks(method: str, parts: frozenset[IndexPart], view: IndexView) -> list[str]:
    """One line per part ``method`` reads (``parts``: its record's ``needs(config)``) that the index of
    ``view`` lacks, in a fixed order."""
    lines = []
    for part in sorted(parts):
        check = _CHECKS.get((method, part))
        if check is None:
            continue
        present, line = check
        if not present(view):
            lines.append(line)
    return lines
