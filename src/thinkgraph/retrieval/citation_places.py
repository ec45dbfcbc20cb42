"""What every answer's citations carry for a reader, whichever entry point asked (Python, HTTP, the
command line, the integrations): where in the file the quote is (the slide, sheet and rows, chapter,
section or page: ``Citation.location``), and the quote as a reader sees it, without Markdown's marks
(``**bold**``, ``# ``: ``Citation.plain_quote``); ``quote`` keeps the document's own characters."""

from __future__ import annotations

from thinkgraph.citations import plain_text
from thinkgraph.ids import document_node_id
from thinkgraph.locations import PARTS_PROP, parts_from_props, place
from thinkgraph.models import Answer
from thinkgraph.store.base import GraphStore


def place_citations(answer: Answer, store: GraphStore) -> None:
    for citation in answer.citations:
        citation.plain_quote = plain_text(citation.quote)
    docs = list(dict.fromkeys(c.doc_id for c in answer.citations if c.start is not None))
    nodes = {n.props.get("doc_id"): n for n in store.get_nodes([document_node_id(d) for d in docs])}
    for citation in answer.citations:
        node = nodes.get(citation.doc_id)
        if node is None or citation.start is None:
            continue
        end = citation.end if citation.end is not None else citation.start + 1
        pages = [p for p in node.props.get("page_starts") or () if isinstance(p, int)]
        citation.location = place(parts_from_props(node.props.get(PARTS_PROP)), pages, citation.start, end)
