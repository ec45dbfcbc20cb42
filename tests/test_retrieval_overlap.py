"""benchmarks/retrieval_compare.py's check that each paper's method stays its own: the share of
questions on which its LLM-free top 5 equals ppr's (as sets of documents)."""

from __future__ import annotations

from support import load_benchmark

common = load_benchmark("retrieval_common")


def test_the_share_of_questions_whose_top_five_equals_the_baselines() -> None:
    ppr = common.Row("ppr", 0, 0, 0, 0, (frozenset("abcde"), frozenset("abcdf"), frozenset("xy")))
    same_order_free = common.Row("m", 0, 0, 0, 0, (frozenset("edcba"), frozenset("abcdg"), frozenset("xy")))
    assert round(common.same_top5(same_order_free, ppr), 1) == 66.7
    assert common.same_top5(common.Row("empty", 0, 0, 0, 0), common.Row("ppr", 0, 0, 0, 0)) == 0.0
