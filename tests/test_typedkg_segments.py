"""The fast GRBench reader: the plain layout is cut into its `<type>_nodes` maps by a regex scan and
streamed node by node; any other layout, or a nested key that looks like a top-level one, falls
back to the event-renaming reader with the same result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support import FIXTURES
from thinkgraph.typedkg import TypedGraphBuilder, importers
from thinkgraph.typedkg.importers import load_grbench


def _snapshot(builder: TypedGraphBuilder) -> tuple:
    return (builder._ids, list(builder._types), bytes(builder._features), builder._texts,  # noqa: SLF001
            [list(a) for a in builder._src], [list(a) for a in builder._dst])  # noqa: SLF001


def _reference(path: Path) -> tuple:
    builder = TypedGraphBuilder()
    load_grbench(path, builder, per_node=False)
    return _snapshot(builder)


def test_plain_layout_is_read_by_segments(monkeypatch: pytest.MonkeyPatch) -> None:
    segments = importers._segments(FIXTURES / "grbench_small.json")  # noqa: SLF001
    assert segments and all(key.endswith("_nodes") for key, _, _ in segments)
    calls = []
    real = importers._load_segments  # noqa: SLF001
    monkeypatch.setattr(importers, "_load_segments", lambda f, b: calls.append(f) or real(f, b))
    builder = TypedGraphBuilder()
    assert load_grbench(FIXTURES / "grbench_small.json", builder) == 8
    assert calls and _snapshot(builder) == _reference(FIXTURES / "grbench_small.json")


def test_a_nested_nodes_key_falls_back_to_the_same_result(tmp_path: Path) -> None:
    data = json.loads((FIXTURES / "grbench_small.json").read_text())
    first = next(iter(data["paper_nodes"].values()))
    first["features"]["extra"] = {"a": {}, "sub_nodes": {"x": 1}}  # looks like a top-level key to the scan
    path = tmp_path / "nested.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    builder = TypedGraphBuilder()
    assert load_grbench(path, builder) == 8
    assert _snapshot(builder) == _reference(path)


def test_other_top_level_keys_use_the_general_reader(tmp_path: Path) -> None:
    path = tmp_path / "meta.json"
    path.write_text('{"meta": {"v": 1}, "paper_nodes": {"p1": {"features": {"title": "t"}, "neighbors": {}}}}')
    assert importers._segments(path) is None  # noqa: SLF001
    assert load_grbench(path, TypedGraphBuilder()) == 1
