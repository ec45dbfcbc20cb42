"""What every backend shares: the schema version and marker, edge keys, the row forms of spans, and
the SQL of the copy sections (both dialects speak `INSERT ... ON CONFLICT DO UPDATE`)."""

from __future__ import annotations

from thinkgraph.ids import edge_id
from thinkgraph.models import Edge
from thinkgraph.store.base import SECTION_BY_NAME, Section

SCHEMA_VERSION = 1
APP_MARKER = "thinkgraph-index"
DERIVED_STALE = "derived_stale"  # "1" once the graph changed after synonyms and communities were built
CHANGES = "changes"  # counts graph changes (documents indexed or removed), for the derived stages


def edge_key(edge: Edge) -> str:
    return edge_id(edge.src, edge.type, edge.dst, str(edge.props.get("predicate", "")))


def none_to_minus(value: int | None) -> int:
    return -1 if value is None else value


def minus_to_none(value: int) -> int | None:
    return None if value < 0 else value


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
