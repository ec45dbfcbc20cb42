"""retrieval/id_table.py against the list and dictionary it stands in for."""

from __future__ import annotations

from pathlib import Path

import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from thinkgraph.graph.matrix import GraphMatrix
from thinkgraph.retrieval.id_table import IdTable

IDS = st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                       min_size=1, max_size=12), unique=True, max_size=60)


@settings(max_examples=200, deadline=None)
@given(IDS, st.lists(st.text(max_size=6), max_size=10))
def test_reads_as_the_list_and_the_dictionary(ids: list[str], strangers: list[str]) -> None:
    table = IdTable.of(ids)
    reference = {node_id: i for i, node_id in enumerate(ids)}
    assert len(table) == len(ids) and list(table) == ids and [table[i] for i in range(len(ids))] == ids
    assert table[1:3] == ids[1:3]
    asked = [*ids, *strangers]
    assert [table.rows.get(i) for i in asked] == [reference.get(i) for i in asked]
    assert [i in table.rows for i in asked] == [i in reference for i in asked]
    assert table.rows_of(asked).tolist() == [reference.get(i, -1) for i in asked]
    assert table.rows.positions(asked) == [reference[i] for i in asked if i in reference]
    matrix = GraphMatrix(table, sp.csr_matrix((len(ids), len(ids))), table.rows)
    assert matrix.rows(asked) == GraphMatrix(ids, matrix.adjacency).rows(asked)  # one search, as the dictionary
    assert dict(table.rows.items()) == reference


@settings(max_examples=100, deadline=None)
@given(IDS, IDS)
def test_positions_of_another_table_as_the_dictionary_gives_them(ids: list[str], others: list[str]) -> None:
    reference = {node_id: i for i, node_id in enumerate(ids)}
    assert IdTable.of(ids).rows_of_table(IdTable.of(others)).tolist() == [reference.get(i, -1) for i in others]


def test_kept_and_read_back_memory_mapped(tmp_path: Path) -> None:
    ids = ["chunk:ab", "ent:ü", "doc:x y", "ent:a"]
    IdTable.of(ids).save(tmp_path)
    table = IdTable.load(tmp_path)
    assert list(table) == ids and table.rows["ent:ü"] == 1 and table.rows.get("ent:b") is None
    try:
        table.rows["nope"]
    except KeyError:
        pass
    else:
        raise AssertionError("a missing id is a KeyError")
    assert list(IdTable.of([])) == [] and IdTable.of([]).rows_of(["x"]).tolist() == [-1]


def test_a_trailing_nul_is_not_dropped_in_a_search() -> None:
    table = IdTable.of(["a", "b"])  # numpy's byte strings would read "a\0" as "a"
    assert table.rows_of(["a\x00", "b"]).tolist() == [-1, 1] and table.rows.positions(["a\x00"]) == []
