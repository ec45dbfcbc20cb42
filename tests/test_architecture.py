"""The structure docs/architecture.md describes: no import cycle anywhere in the package (the layer
contracts themselves are checked by lint-imports in scripts/test.sh, from pyproject.toml)."""

from __future__ import annotations

import grimp
import networkx as nx


def test_no_import_cycle_in_the_package() -> None:
    graph = grimp.build_graph("thinkgraph", exclude_type_checking_imports=False)
    imports = nx.DiGraph()
    for module in graph.modules:
        imports.add_node(module)
        imports.add_edges_from((module, target) for target in graph.find_modules_directly_imported_by(module))
    cycles = [sorted(c) for c in nx.strongly_connected_components(imports) if len(c) > 1]
    assert cycles == []


def test_data_classes_have_no_side_effects_when_built() -> None:
    from thinkgraph.models import TraceStep
    from thinkgraph.tracing import listen_steps

    heard: list[TraceStep] = []
    with listen_steps(heard.append):
        TraceStep(agent="a", action="b")
    assert heard == []
