"""Writes the parts of the docs that are generated from the code:

- docs/img/overview.svg, the README's picture of the index and the methods: the node and edge types
  of ``thinkgraph.models`` (derived edges dashed) and the method catalog of
  ``thinkgraph.methods.catalog`` (what each method is, whether it needs an LLM, what it reads);
- the settings tables of docs/methods.md (between ``<!-- settings: NAME -->`` and
  ``<!-- /settings -->``): every setting of each method's settings model, its default and the comment
  that documents it, as the service's ``GET /v1/methods`` gives them.

    .venv/bin/python docs/generate.py           # rewrite both
    .venv/bin/python docs/generate.py --check   # exit 1 if either is not current

Where a node sits and which types an edge joins are written here by hand (the code does not say); a
node or edge type the code gains and this file does not place is an error, so the picture cannot
silently fall behind. tests/test_docs_commands.py runs ``--check``.
"""

from __future__ import annotations

import re
import sys
from html import escape
from pathlib import Path
from typing import Any

from thinkgraph.methods.catalog import CATALOG, DEFAULT_METHOD, IndexPart
from thinkgraph.models import DERIVED_EDGE_TYPES, EdgeType, NodeType

DOCS = Path(__file__).resolve().parent
OUT = DOCS / "img" / "overview.svg"
METHODS_PAGE = DOCS / "methods.md"
SETTINGS_BLOCK = re.compile(r"(<!-- settings: (?P<name>[\w-]+) -->\n).*?(<!-- /settings -->)", re.S)
WIDTH, HEIGHT = 1100, 560
FONT = "system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif"
MONO = "ui-monospace, 'SFMono-Regular', Menlo, Consolas, monospace"

# node type -> (centre x, centre y, label, what makes it, fill colour)
NODES: dict[NodeType, tuple[int, int, str, str, str]] = {
    NodeType.DOCUMENT: (310, 100, "document", "a file, with its summary", "#e8eef7"),
    NodeType.CHUNK: (310, 200, "chunk", "a passage, with its span", "#dbeafe"),
    NodeType.TRIPLET: (88, 200, "triplet", "-e llm, or imported", "#fde2e2"),
    NodeType.PROPOSITION: (458, 270, "proposition", "-e propositions (ToPG)", "#ede4fb"),
    NodeType.ENTITY: (310, 340, "entity", "every extractor", "#dcf5e3"),
    NodeType.COMMUNITY: (310, 460, "community", "Leiden, with a summary", "#fff1d6"),
}
TYPED_KG = (88, 460, "typed graph", "index --kg (GRBench)", "#eeeeee")
NODE_W, NODE_H = 130, 46

# edge type -> (from, to, label position: dx, dy from the edge's middle)
EDGES: dict[EdgeType, tuple[NodeType, NodeType, int, int]] = {
    EdgeType.PART_OF: (NodeType.CHUNK, NodeType.DOCUMENT, 8, 4),
    EdgeType.MENTIONED_IN: (NodeType.TRIPLET, NodeType.CHUNK, -36, -8),
    EdgeType.CONTAINS: (NodeType.CHUNK, NodeType.ENTITY, 8, 4),
    EdgeType.MENTIONS: (NodeType.PROPOSITION, NodeType.ENTITY, 10, 14),
    EdgeType.FROM: (NodeType.PROPOSITION, NodeType.CHUNK, 10, -6),
    EdgeType.SUMMARY_FOR: (NodeType.COMMUNITY, NodeType.ENTITY, 8, 4),
}
# edges from a type to itself: drawn as one loop per node type (on the side LOOP_SIDE says), their
# names listed beside it
LOOP_SIDE: dict[NodeType, int] = {NodeType.ENTITY: -1, NodeType.COMMUNITY: 1}
LOOPS: dict[EdgeType, NodeType] = {
    EdgeType.OPENREL: NodeType.ENTITY,
    EdgeType.CO_OCCURS: NodeType.ENTITY,
    EdgeType.SYNONYM: NodeType.ENTITY,
    EdgeType.CHILD_OF: NodeType.COMMUNITY,
}
# what a method reads -> the colour of the node type that holds it
PART_COLOUR: dict[IndexPart, str] = {
    IndexPart.TRIPLETS: NODES[NodeType.TRIPLET][4],
    IndexPart.COMMUNITIES: NODES[NodeType.COMMUNITY][4],
    IndexPart.PROPOSITIONS: NODES[NodeType.PROPOSITION][4],
    IndexPart.SUMMARIES: NODES[NodeType.DOCUMENT][4],
    IndexPart.TYPED_KG: TYPED_KG[4],
}
LLM_COLOUR = "#fbd5b5"


def _check_coverage() -> None:
    missing = [t.value for t in NodeType if t not in NODES]
    missing += [e.value for e in EdgeType if e not in EDGES and e not in LOOPS]
    missing += [p.value for p in IndexPart if p not in PART_COLOUR]
    if missing:
        raise SystemExit(f"docs/img/overview.py does not place: {', '.join(missing)}")


def _text(x: float, y: float, s: str, size: int = 12, weight: str = "normal", anchor: str = "start",
          family: str = FONT, fill: str = "#1f2937", style: str = "normal") -> str:
    return (f'<text x="{x:g}" y="{y:g}" font-family="{family}" font-size="{size}" font-weight="{weight}" '
            f'font-style="{style}" text-anchor="{anchor}" fill="{fill}">{escape(s)}</text>')


def _edge_point(src: tuple[int, int], dst: tuple[int, int]) -> tuple[float, float]:
    """Where the segment from src's centre to dst's centre enters dst's box."""
    dx, dy = src[0] - dst[0], src[1] - dst[1]
    sx = (NODE_W / 2) / abs(dx) if dx else float("inf")
    sy = (NODE_H / 2) / abs(dy) if dy else float("inf")
    s = min(sx, sy)
    return dst[0] + dx * s, dst[1] + dy * s


def _index_panel() -> list[str]:
    out = ['<rect x="10" y="10" width="520" height="540" rx="10" fill="#fafafa" stroke="#d1d5db"/>',
           _text(24, 34, "The index", 15, "bold"),
           _text(24, 52, "one SQLite file or PostgreSQL schema; every node has a vector and its provenance",
                 11, fill="#4b5563")]
    for edge, (a, b, ldx, ldy) in EDGES.items():
        pa, pb = NODES[a][:2], NODES[b][:2]
        x1, y1 = _edge_point(pb, pa)
        x2, y2 = _edge_point(pa, pb)
        dash = ' stroke-dasharray="5 4"' if edge in DERIVED_EDGE_TYPES else ""
        out.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#6b7280" '
                   f'stroke-width="1.4" marker-end="url(#arrow)"{dash}/>')
        out.append(_text((x1 + x2) / 2 + ldx, (y1 + y2) / 2 + ldy, edge.value, 10, family=MONO, fill="#374151"))
    by_node: dict[NodeType, list[EdgeType]] = {}
    for edge, node in LOOPS.items():
        by_node.setdefault(node, []).append(edge)
    for node, edges in by_node.items():
        x, y = NODES[node][:2]
        side = LOOP_SIDE[node]
        edge_x = x + side * NODE_W / 2
        bulge = edge_x + side * 46
        out.append(f'<path d="M {edge_x:g} {y - 10} C {bulge:g} {y - 34}, {bulge:g} {y + 34}, '
                   f'{edge_x:g} {y + 10}" fill="none" stroke="#6b7280" stroke-width="1.4" marker-end="url(#arrow)"/>')
        for i, edge in enumerate(edges):
            dash = " (derived)" if edge in DERIVED_EDGE_TYPES else ""
            out.append(_text(edge_x + side * 44, y - 6 * (len(edges) - 1) + 12 * i + 4, edge.value + dash, 10,
                             anchor="start" if side > 0 else "end", family=MONO, fill="#374151"))
    for x, y, label, made_by, fill in [*NODES.values(), TYPED_KG]:
        dash = ' stroke-dasharray="4 3"' if (x, y) == TYPED_KG[:2] else ""
        out.append(f'<rect x="{x - NODE_W / 2:g}" y="{y - NODE_H / 2:g}" width="{NODE_W}" height="{NODE_H}" '
                   f'rx="8" fill="{fill}" stroke="#4b5563"{dash}/>')
        out.append(_text(x, y - 3, label, 13, "bold", "middle"))
        out.append(_text(x, y + 13, made_by, 10, anchor="middle", fill="#4b5563"))
    out.append(_text(24, 530, "solid: written as a document is indexed; dashed: derived from the whole graph",
                     10, fill="#4b5563", style="italic"))
    return out


def _chip(x: float, y: float, label: str, fill: str) -> tuple[str, float]:
    w = 7 * len(label) + 14
    return (f'<rect x="{x:g}" y="{y:g}" width="{w:g}" height="17" rx="8.5" fill="{fill}" stroke="#9ca3af"/>'
            + _text(x + w / 2, y + 12.5, label, 10, anchor="middle", family=MONO)), w


def _methods_panel() -> list[str]:
    x0 = 540
    out = [f'<rect x="{x0}" y="10" width="550" height="540" rx="10" fill="#fafafa" stroke="#d1d5db"/>',
           _text(x0 + 14, 34, "The methods", 15, "bold"),
           _text(x0 + 14, 52, "one index, every method; each reads the chunks (most also the entities),",
                 11, fill="#4b5563"),
           _text(x0 + 14, 66, "and the chips say what else it needs", 11, fill="#4b5563")]
    top, row = 78, 42
    for i, record in enumerate(CATALOG):
        y = top + i * row
        if i % 2 == 0:
            out.append(f'<rect x="{x0 + 6}" y="{y - 4}" width="538" height="{row}" rx="4" fill="#f1f5f9"/>')
        name = record.name + (" (default)" if record.name == DEFAULT_METHOD else "")
        out.append(_text(x0 + 16, y + 13, name, 13, "bold", family=MONO))
        chips: list[tuple[str, str]] = []
        if record.needs_llm:
            chips.append(("needs an LLM", LLM_COLOUR))
        if not record.retrieves:
            chips.append(("no retrieval", "#ffffff"))
        chips += [(part.value, PART_COLOUR[part]) for part in sorted(record.reads)]
        cx = x0 + 200
        for label, fill in chips:
            svg, w = _chip(cx, y + 1, label, fill)
            out.append(svg)
            cx += w + 6
        out.append(_text(x0 + 16, y + 30, record.summary, 11, fill="#374151"))
    return out


def render() -> str:
    _check_coverage()
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="The thinkgraph index and its methods">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#6b7280"/></marker></defs>',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>',
        *_index_panel(),
        *_methods_panel(),
        "</svg>",
    ]
    return "\n".join(parts) + "\n"


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def _value(value: Any) -> str:
    """A default as it is written after ``-o KEY=``."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _model_source(name: str) -> str:
    """Where the method's settings model is defined, as ``Model`` in ``src/...py`` (from its module's
    name, so that it reads the same wherever the package is installed)."""
    from thinkgraph.methods.catalog import get

    model = get(name).config_model()
    return f"`{model.__name__}` in `src/{model.__module__.replace('.', '/')}.py`"


def settings_table(name: str) -> str:
    """The settings of method ``name`` as a Markdown table (defaults as a fresh configuration gives them)."""
    from thinkgraph.config import Settings
    from thinkgraph.service.method_info import method_infos

    info = next((i for i in method_infos(Settings()) if i.name == name), None)
    if info is None:
        raise SystemExit(f"docs/methods.md names a method the catalog does not have: {name}")
    if not info.settings:
        return "\nNo settings.\n\n"
    rows = ["| setting | default | what it does |", "|---|---|---|"]
    for s in info.settings:
        default = "none" if s.default is None else f"`{_value(s.default)}`"
        choices = f" One of {', '.join(f'`{c}`' for c in s.choices)}." if s.choices else ""
        rows.append(f"| `{s.name}` | {_cell(default)} | {_cell(s.description)}{choices} |")
    return f"\nSettings (`-o KEY=VALUE`; {_model_source(name)}):\n\n" + "\n".join(rows) + "\n\n"


def render_methods_page(text: str) -> str:
    from thinkgraph.methods.catalog import METHOD_NAMES

    named = set(_block_names(text))
    missing = [m for m in METHOD_NAMES if m not in named]
    if missing:
        raise SystemExit(f"docs/methods.md has no settings block for: {', '.join(missing)}")
    return SETTINGS_BLOCK.sub(lambda m: m.group(1) + settings_table(m.group("name")) + m.group(3), text)


def _block_names(text: str) -> list[str]:
    return [m.group("name") for m in SETTINGS_BLOCK.finditer(text)]


def main(argv: list[str]) -> int:
    outputs = {OUT: render(), METHODS_PAGE: render_methods_page(METHODS_PAGE.read_text(encoding="utf-8"))}
    stale = [p for p, text in outputs.items() if not p.exists() or p.read_text(encoding="utf-8") != text]
    if "--check" in argv:
        for path in stale:
            print(f"{path.relative_to(DOCS.parent)} is not current: run .venv/bin/python docs/generate.py",
                  file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(outputs[path], encoding="utf-8")
        print(f"wrote {path.relative_to(DOCS.parent)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
