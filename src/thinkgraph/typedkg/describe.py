"""The graph definition shown to a model, within a character budget.

A GRBench graph's definition (a dozen node types, a few dozen edge types) is a few hundred to two
thousand characters and is shown whole, as Graph-CoT does. A corpus-built index has one edge type per
OpenIE predicate and its inverse: MuSiQue's 10,063 predicates made a 472,174-character definition,
above any model's context window. Above the budget the definition lists the most frequent node types
and edge types with their counts and says how many it left out."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# Ours: node types named on either side of one edge type, and the characters of one line of the
# definition (an OpenIE predicate can be a whole clause; a corpus-built graph can have hundreds of
# extracted entity types). Beyond them a line says how many more there are / is cut.
MAX_JOINED_TYPES = 8
BOUNDED_JOINED_TYPES = 3  # ... and fewer when the definition is cut to its budget (more types fit)
MAX_LINE_CHARS = 240
LISTED_IN_ERRORS = 30  # edge types an "unknown edge type" message names
NODE_SHARE = 4  # above the budget, node types take at most a quarter of it
INVERSE_SUFFIX = "~"  # the inverse of edge type r is r~ (a corpus-built index's predicates, importers.py)


@dataclass(frozen=True, slots=True)
class GraphDescription:
    text: str
    hidden_node_types: int = 0
    hidden_edge_types: int = 0

    @property
    def complete(self) -> bool:
        return not (self.hidden_node_types or self.hidden_edge_types)


def listed(names: Sequence[str], limit: int = LISTED_IN_ERRORS) -> str:
    more = f" (and {len(names) - limit} more)" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def _joined(types: Sequence[str], limit: int) -> str:
    more = f" (+{len(types) - limit} types)" if len(types) > limit else ""
    return "/".join(types[:limit]) + more


def _cut(line: str, limit: int = MAX_LINE_CHARS) -> str:
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _node_line(name: str, keys: Iterable[str], count: int | None = None) -> str:
    counted = f" ({count:,})" if count is not None else ""
    return _cut(f"- {name} nodes{counted}, features: {', '.join(keys) or '(none)'}")


def _edge_line(name: str, joins: Mapping[str, Sequence[str]], count: int | None = None, *,
               inverse: bool = False) -> str:
    reversed_as = f"; reversed: {name}{INVERSE_SUFFIX}" if inverse else ""
    counted, limit = ((f" ({count:,} edges{reversed_as})", BOUNDED_JOINED_TYPES) if count is not None
                      else ("", MAX_JOINED_TYPES))
    return _cut(f"- edge type {name}: {_joined(joins['from'], limit)} -> {_joined(joins['to'], limit)}{counted}")


def _fill(lines: Iterable[str], budget: int) -> tuple[list[str], int]:
    """The lines, in order, while they fit in ``budget`` characters (each with its newline)."""
    kept: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > budget:
            break
        kept.append(line)
        used += len(line) + 1
    return kept, used


def describe_schema(schema: Mapping[str, Any], edge_counts: Mapping[str, int],
                    node_counts: Callable[[], Mapping[str, int]], max_chars: int | None = None) -> GraphDescription:
    """Each node type with its features and each edge type with the node types it joins; when that
    exceeds ``max_chars``, the most frequent of each (with counts; an edge type and its inverse on one
    line) and a line per kind left out."""
    features: Mapping[str, Sequence[str]] = schema.get("features", {})
    edges: Mapping[str, Mapping[str, Sequence[str]]] = schema.get("edges", {})
    full = [_node_line(t, keys) for t, keys in features.items()] + [_edge_line(n, e) for n, e in edges.items()]
    text = "\n".join(full)
    if max_chars is None or len(text) <= max_chars:
        return GraphDescription(text)
    nodes = node_counts()
    node_order = sorted(features, key=lambda t: -nodes.get(t, 0))  # (a stable sort: ties keep type order)
    inverse = {e for e in edges if e + INVERSE_SUFFIX in edges}  # (listed on the line of the type they invert)
    folded = {e + INVERSE_SUFFIX for e in inverse}
    edge_order = sorted((e for e in edges if e not in folded), key=lambda e: -edge_counts.get(e, 0))
    top = edge_counts.get(edge_order[0], 0) if edge_order else 0
    room = max_chars - len(_node_note(len(node_order))) - len(_edge_note(len(edges), len(edges), top)) - 2
    node_lines, used = _fill((_node_line(t, features[t], nodes.get(t, 0)) for t in node_order), room // NODE_SHARE)
    edge_lines, _ = _fill((_edge_line(e, edges[e], edge_counts.get(e, 0), inverse=e in inverse) for e in edge_order),
                          room - used)
    named = len(edge_lines) + sum(e in inverse for e in edge_order[: len(edge_lines)])
    hidden_nodes, hidden_edges = len(node_order) - len(node_lines), len(edges) - named
    notes = [_node_note(hidden_nodes)] if hidden_nodes else []
    if hidden_edges:
        notes.append(_edge_note(hidden_edges, len(edges), edge_counts.get(edge_order[len(edge_lines)], 0)))
    return GraphDescription("\n".join(node_lines + edge_lines + notes), hidden_nodes, hidden_edges)


def _node_note(hidden: int) -> str:
    return f"- ... and {hidden:,} more node types, with fewer nodes each"


def _edge_note(hidden: int, total: int, most: int) -> str:
    return (f"- ... and {hidden:,} more edge types (of {total:,}), with at most {most:,} edges each: "
            "the listed ones are the most frequent")
