"""What every backend shares: the schema version and marker, edge keys, the row forms of spans, and
the SQL of the copy sections (both dialects speak `INSERT ... ON CONFLICT DO UPDATE`)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from thinkgraph.ids import edge_id
from thinkgraph.models import DocStatus, DocumentRecord, Edge, Node, Proposal, Provenance
from thinkgraph.store.base import SECTION_BY_NAME, Section

SCHEMA_VERSION = 1
APP_MARKER = "thinkgraph-index"
DERIVED_STALE = "derived_stale"  # "1" once the graph changed after synonyms and communities were built
CHANGES = "changes"  # counts graph changes (documents indexed or removed), for the derived stages
# A fresh random token in the transaction of every change to nodes, edges or vectors: files derived
# from the index (the retrieval view cache) are keyed by it. Random rather than a counter, so that two
# copies of one index that change apart never share a token.
CONTENT_REVISION = "content_revision"
GRAPH_SECTIONS = frozenset({"nodes", "edges", "vectors"})


class Revisions:
    """The content revision of a store (mixed into every backend; uses its meta table)."""

    get_meta: Callable[[str], str | None]  # both provided by the store
    set_meta: Callable[[str, str], None]

    def content_revision(self) -> str | None:
        """None for an index written before revisions were kept, until its next change."""
        return self.get_meta(CONTENT_REVISION)

    def _revise(self) -> None:
        """Call inside the transaction of a change to nodes, edges or vectors."""
        self.set_meta(CONTENT_REVISION, uuid.uuid4().hex)


def edge_key(edge: Edge) -> str:
    """The id of an edge, the same in every backend (its provenance records are filed under it)."""
    return edge_id(edge.src, edge.type, edge.dst, str(edge.props.get("predicate", "")))


def none_to_minus(value: int | None) -> int:
    return -1 if value is None else value


def minus_to_none(value: int) -> int | None:
    return None if value < 0 else value


# rows as both backends store them, and back --------------------------------------------------
def node_row(n: Node) -> tuple[Any, ...]:
    return n.id, str(n.type), n.text, json.dumps(n.props, ensure_ascii=False)


def edge_row(e: Edge) -> tuple[Any, ...]:
    return edge_key(e), e.src, e.dst, str(e.type), float(e.weight), json.dumps(e.props, ensure_ascii=False)


def provenance_row(p: Provenance) -> tuple[Any, ...]:
    return p.item_id, p.doc_id, p.chunk_id or "", none_to_minus(p.start), none_to_minus(p.end)


def _props(text: str) -> dict[str, Any]:
    # most edges (co-occurrence, containment, communities') carry none: no JSON parse for them (a third of
    # reading the entity graph at 100k passages)
    return {} if text == "{}" else dict(json.loads(text))


def node_from(row: tuple[Any, ...]) -> Node:  # id, type, text, props
    return Node(id=row[0], type=row[1], text=row[2], props=_props(row[3]))


def edge_from(row: tuple[Any, ...]) -> Edge:  # src, dst, type, weight, props
    return Edge(src=row[0], dst=row[1], type=row[2], weight=row[3], props=_props(row[4]))


def provenance_from(row: tuple[Any, ...]) -> Provenance:
    return Provenance(row[0], row[1], row[2] or None, minus_to_none(row[3]), minus_to_none(row[4]))


def document_from(row: tuple[Any, ...]) -> DocumentRecord:  # id, source, title, content_hash, status, error, n_chars
    return DocumentRecord(id=row[0], source=row[1], title=row[2], content_hash=row[3], status=DocStatus(row[4]),
                          error=row[5], n_chars=row[6])


def section(name: str) -> Section:
    try:
        return SECTION_BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown index section {name!r}") from None


def _cols(names: tuple[str, ...]) -> str:
    return ", ".join(f'"{c}"' for c in names)  # quoted: "end" is reserved in PostgreSQL


INSERTION_ORDERED = ("nodes", "edges", "vectors")  # sections that keep the order rows were added in


def select_sql(part: Section, insertion: str) -> str:
    """All rows of a section in the same order in every backend: insertion order (the backend's
    ``insertion`` column) where it matters, else by key (text keys sort bytewise in both)."""
    order = insertion if part.name in INSERTION_ORDERED else _cols(part.key)
    return f"SELECT {_cols(part.columns)} FROM {part.name} ORDER BY {order}"


def upsert_sql(part: Section, mark: str) -> str:
    """Insert rows, a row with the same key replacing the one there (``mark``: ? or %s)."""
    values = ", ".join(mark for _ in part.columns)
    rest = [c for c in part.columns if c not in part.key]
    action = "DO UPDATE SET " + ", ".join(f'"{c}" = excluded."{c}"' for c in rest) if rest else "DO NOTHING"
    return (f"INSERT INTO {part.name} ({_cols(part.columns)}) VALUES ({values})"
            f" ON CONFLICT ({_cols(part.key)}) {action}")


def proposal_from_row(row: Sequence[Any]) -> Proposal:
    """A proposals row (id, question, subject, predicate, object, chunk_id, doc_id, status)."""
    return Proposal(question=row[1], subject=row[2], predicate=row[3], object=row[4], chunk_id=row[5],
                    doc_id=row[6], status=row[7], id=row[0])
