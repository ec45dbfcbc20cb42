"""The evaluation slice: metrics against hand-computed cases, question loading, the runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support import FIXTURES
from thinkgraph.errors import ConfigError, InputError
from thinkgraph.eval.datasets import load_questions
from thinkgraph.eval.metrics import (
    exact_match,
    normalize_answer,
    percentile,
    recall_at_k,
    rouge_l,
    substring_match,
    token_f1,
)
from thinkgraph.eval.runner import EvalRunner, MethodSpec
from thinkgraph.testing import ScriptedBackend


def test_normalisation_corner_cases() -> None:
    assert normalize_answer("The  U.S.A.!") == "usa"
    assert normalize_answer("an Apple, a day") == "apple day"
    assert normalize_answer("") == "" and normalize_answer(None) == ""  # type: ignore[arg-type]


def test_exact_and_substring_match_with_aliases() -> None:
    golds = ["Los Angeles Dodgers", "Dodgers"]
    assert exact_match("the Dodgers.", golds) == 1.0
    assert exact_match("They played the Dodgers", golds) == 0.0
    assert substring_match("They played the Dodgers", golds) == 1.0
    assert substring_match("Dodgersville", golds) == 0.0  # whole words only
    assert exact_match(None, golds) == 0.0 and exact_match("", [""]) == 0.0


def test_token_f1_by_hand() -> None:
    # prediction "new york city" vs gold "new york": common 2, P = 2/3, R = 1, F1 = 0.8
    score = token_f1("New York City", ["New York"])
    assert (score.precision, score.recall) == pytest.approx((2 / 3, 1.0)) and score.f1 == pytest.approx(0.8)
    assert token_f1("Boston", ["New York", "boston"]).f1 == 1.0  # best alias
    assert token_f1("", ["x"]).f1 == 0.0 and token_f1("x", []).f1 == 0.0


def test_recall_at_k_rouge_and_percentile() -> None:
    assert recall_at_k(["a", "a", "b", "c"], ["b", "c"], 2) == 0.5  # repeats do not take a rank
    assert recall_at_k(["a"], [], 5) == 0.0
    assert rouge_l("the cat sat", ["the cat sat down"]) == pytest.approx(2 * 1 * 0.75 / 1.75)
    assert rouge_l(None, ["x"]) == 0.0
    assert percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 95) == 10 and percentile([3, 1, 2], 50) == 2
    assert percentile([], 95) == 0.0


def test_question_loader_names_file_line_and_field(tmp_path: Path) -> None:
    qs = load_questions(FIXTURES / "questions_small.jsonl")
    assert [q.id for q in qs] == ["q1", "q2", "q3"] and qs[0].answers == ("Alice Stone", "A. Stone")
    assert qs[2].supporting_ids == ("c2", "c3") and len(load_questions(FIXTURES / "questions_small.jsonl", 2)) == 2
    bad = tmp_path / "bad.jsonl"
    for content, message in [('{"id": 1}', "bad.jsonl:1: field 'question'"), ("{oops", "bad.jsonl:1: malformed"),
                             ('{"question": "q", "supporting_ids": "c1"}', "field 'supporting_ids'")]:
        bad.write_text(content, encoding="utf-8")
        with pytest.raises(InputError, match=message):
            load_questions(bad)
    with pytest.raises(InputError, match="not found"):
        load_questions(tmp_path / "none.jsonl")


def test_method_spec_parsing() -> None:
    spec = MethodSpec.parse("a2rag:relation_seeds=false,k_hops=3,out_of_scope=abstain")
    assert spec.method == "a2rag" and spec.options == {"relation_seeds": False, "k_hops": 3,
                                                       "out_of_scope": "abstain"}
    with pytest.raises(ConfigError, match="not key=value"):
        MethodSpec.parse("ppr:oops")


async def test_retrieval_only_run_resumes_and_summarises(open_bridge, tmp_path: Path) -> None:  # noqa: ANN001
    tg = open_bridge()
    qs = load_questions(FIXTURES / "questions_small.jsonl")
    specs = [MethodSpec.parse("naive"), MethodSpec.parse("ppr"), MethodSpec.parse("a2rag:relation_seeds=false")]
    runner = EvalRunner(tg, specs, tmp_path / "out", retrieval_only=True)
    rows = await runner.run(qs[:2])
    assert [r["method"] for r in rows] == ["naive", "ppr", "a2rag:relation_seeds=false"]
    assert all(r["questions"] == 2 and r["errors"] == 0 for r in rows)
    assert rows[0]["recall@10"] == 100.0 and "em" not in rows[0]
    records = [json.loads(x) for x in (tmp_path / "out" / "records.jsonl").read_text().splitlines()]
    assert len(records) == 6 and records[0]["retrieved"]
    # a second run asks only what is missing
    rows = await runner.run(qs)
    records = (tmp_path / "out" / "records.jsonl").read_text().splitlines()
    assert len(records) == 9 and all(r["questions"] == 3 for r in rows)
    with pytest.raises(ConfigError, match="no retrieval-only mode"):
        EvalRunner(tg, [MethodSpec.parse("kgr")], tmp_path / "x", retrieval_only=True)
    # tog3's Retriever runs without an LLM (no keyword expansion); none retrieves nothing
    # (an imported graph has no communities by default: [index] communities)
    rows = await EvalRunner(tg, [MethodSpec.parse("tog3:use_communities=false"), MethodSpec.parse("none")],
                            tmp_path / "y",
                            retrieval_only=True).run(qs)
    assert rows[0]["errors"] == 0 and rows[0]["recall@10"] > 0 and rows[1]["recall@10"] == 0.0


async def test_retrieval_only_rows_name_the_llm_free_variant_that_ran(open_bridge, tmp_path: Path) -> None:  # noqa: ANN001
    from thinkgraph.eval.report import render_report

    qs = load_questions(FIXTURES / "questions_small.jsonl")[:2]
    specs = [MethodSpec.parse(m) for m in ("ppr", "a2rag", "tog3", "topg", "topg:mode=global,min_facts=5")]
    rows = await EvalRunner(open_bridge(), specs, tmp_path / "out", retrieval_only=True).run(qs)
    variants = {r["method"]: r.get("variant") for r in rows}
    assert variants["ppr"] is None  # ppr without an LLM is ppr's retrieval: nothing stands in for it
    assert variants["a2rag"].startswith("no LLM, retrieval=shared: linked question entities; local, bridge and "
                                        "PPR stages all run")
    assert variants["tog3"].startswith("no LLM: Retriever only")
    assert "Suggest-local walk" in variants["topg"] and "Alg. 2 anchors" in variants["topg:mode=global,min_facts=5"]
    text = render_report(rows, title="T")
    assert f"| a2rag ({variants['a2rag']}) | 2 |" in text and "| ppr | 2 |" in text
    assert all("variant" not in r.get("stats", {}) for r in rows)


async def test_end_to_end_run_scores_answers_and_cost(open_bridge, tmp_path: Path) -> None:  # noqa: ANN001
    answers = {"Who founded": "Alice Stone [1]", "Carol Diaz": "She was born in Rivertown [1]",
               "valley": "Unknown"}
    def reply(request) -> str:  # noqa: ANN001 - answers by the question asked, not by the passages shown
        question = request.messages[-1]["content"].rsplit("Question: ", 1)[1]
        return next(v for k, v in answers.items() if k in question)

    backend = ScriptedBackend(rules=[("", reply)])
    tg = open_bridge(backend)
    runner = EvalRunner(tg, [MethodSpec.parse("naive")], tmp_path / "out")
    (row,) = await runner.run(load_questions(FIXTURES / "questions_small.jsonl"))
    assert row["em"] == pytest.approx(100 / 3) and row["em_substring"] == pytest.approx(200 / 3)
    assert row["calls_mean"] == 1 and row["prompt_tokens_p95"] > 0
    assert 0 < row["seconds_p50"] <= row["seconds_p95"]  # the median beside mean and P95
    assert row["abstained"] == pytest.approx(100 / 3)  # "Unknown" is an abstention, and it is reported
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary[0]["method"] == "naive"
    from thinkgraph.eval.report import render_report

    assert "abstained" in render_report(summary, title="T").split("## Retrieval")[0]


async def test_correctness_judge_and_pairwise_elo_through_the_runner(open_bridge, tmp_path: Path) -> None:  # noqa: ANN001
    from thinkgraph.eval.runner import pairwise

    def judge_pair_reply(request) -> str:  # noqa: ANN001
        prompt = request.messages[0]["content"]
        first_is_ppr = prompt.index("PPR") < prompt.index("NAIVE")
        return json.dumps({c: {"winner": 1 if first_is_ppr else 2, "explanation": "ppr's is better"} for c in
                           ("comprehensiveness", "diversity", "empowerment", "overall")})

    backend = ScriptedBackend(rules=[("Decide whether the predicted answer", '{"correct": true}'),
                                     ("Compare two answers", judge_pair_reply),
                                     ("Entity paths", "PPR answer [1]"),  # only ppr's prompt shows paths
                                     ("Passages:", "NAIVE answer [1]")])
    tg = open_bridge(backend)
    qs = load_questions(FIXTURES / "questions_small.jsonl")[:2]
    runner = EvalRunner(tg, [MethodSpec.parse("naive"), MethodSpec.parse("ppr")], tmp_path / "out", judge=True)
    rows = await runner.run(qs)
    assert all(r["llm_correct"] == 100.0 for r in rows)
    result = await pairwise(tg, tmp_path / "out", qs, "naive", ["naive", "ppr"])
    overall = result["methods"]["ppr"]["criteria"]["overall"]
    assert result["methods"]["ppr"]["pairs"] == 2 and overall["win_rate"] == 1.0
    assert overall["elo"] == pytest.approx(1600 + 400 * 2.99957, abs=0.1) and overall["inconsistent"] == 0
    saved = json.loads((tmp_path / "out" / "pairwise.json").read_text())
    assert saved["methods"]["ppr"]["questions"][0]["explanations"]["a_first"]["overall"] == "ppr's is better"
    with pytest.raises(ConfigError, match="retrieval-only"):
        EvalRunner(tg, [MethodSpec.parse("naive")], tmp_path / "y", retrieval_only=True, judge=True)


def test_markdown_report_tables() -> None:
    from thinkgraph.eval.report import render_report

    columns = ("calls", "prompt_tokens", "completion_tokens", "seconds")
    cost = {f"{c}_{s}": 1.0 for c in columns for s in ("mean", "p95")}
    rows = [{"method": "naive", "questions": 3, "errors": 0, "em": 33.3333, "recall@5": 50.0, **cost},
            {"method": "ppr", "questions": 3, "errors": 1, "em": 66.6667, "recall@5": 75.0, **cost}]
    pair = {"reference": "naive", "methods": {"ppr": {"pairs": 3, "criteria": {
        "overall": {"win_rate": 0.75, "elo": 1790.8, "inconsistent": 1, "failed": 0, "win_rate_ci95": [0.5, 1.0],
                    "elo_ci95": [1600.0, 2800.0], "counts": {"a": 2, "tie_inconsistent": 1}}}}}}
    stats = {"nodes": {"chunk": 4}, "edges": {"OPENREL": 7}, "size_bytes": 2_000_000,
             "llm_usage": {"index.extract_triplets": {"calls": 4}, "answer.from_passages": {"calls": 9}}}
    text = render_report(rows, title="T", index_stats=stats, pairwise=pair)
    assert "| naive | 3 | 33.3 |" in text and "| ppr | 3 | 66.7 |" in text
    assert "## Retrieval (%)" in text and "| ppr | 3 | 75.0 |" in text
    assert "| indexing LLM calls | 4 |" in text and "| chunk nodes | 4 |" in text
    assert "| ppr | overall | 75.0 | 50.0-100.0 | 1790.8 | 1600.0-2800.0 | 2 | 0 | 1 | 0 | 0 | 0 | 0 | 3 |" in text


async def test_recall_counts_retrieved_passages_citation_recall_apart_and_no_llm_is_refused(
        open_bridge, tmp_path: Path) -> None:  # noqa: ANN001
    qs = load_questions(FIXTURES / "questions_small.jsonl")
    with pytest.raises(ConfigError, match="need an LLM endpoint"):
        EvalRunner(open_bridge(None), [MethodSpec.parse("naive")], tmp_path / "none")
    retrieval = await EvalRunner(open_bridge(None), [MethodSpec.parse("naive")], tmp_path / "r",
                                 retrieval_only=True).run(qs)
    # the model cites one passage of the five retrieved: Recall@k still measures what was retrieved
    backend = ScriptedBackend(rules=[("Decide whether the predicted answer", "not json at all"),
                                     ("Passages:", "Alice Stone [1]")])
    runner = EvalRunner(open_bridge(backend), [MethodSpec.parse("naive")], tmp_path / "a", judge=True)
    (row,) = await runner.run(qs)
    assert row["recall@5"] == pytest.approx(retrieval[0]["recall@5"]) and row["recall@5"] > 0
    assert row["citation_recall"] <= row["recall@5"]
    assert row["judge_failures"] == len(qs) and "llm_correct" not in row
    record = json.loads((tmp_path / "a" / "records.jsonl").read_text().splitlines()[0])
    assert len(record["cited"]) == 1 and len(record["retrieved"]) > 1


async def test_an_abstention_is_not_a_correct_answer_and_accuracy_is_shown_both_ways(open_bridge,  # noqa: ANN001
                                                                                      tmp_path: Path) -> None:
    judged: list[str] = []

    def judge(request) -> str:  # noqa: ANN001 - a judge that would call anything correct
        judged.append(request.messages[-1]["content"])
        return '{"correct": true}'

    def answer(request) -> str:  # noqa: ANN001
        return "Unknown" if "valley" in request.messages[-1]["content"].rsplit("Question: ", 1)[1] else "Alice [1]"

    backend = ScriptedBackend(rules=[("Decide whether the predicted answer", judge), ("Passages:", answer)])
    qs = load_questions(FIXTURES / "questions_small.jsonl")
    (row,) = await EvalRunner(open_bridge(backend), [MethodSpec.parse("naive")], tmp_path / "o", judge=True).run(qs)
    assert len(judged) == 2 and not any("Predicted answer: Unknown" in p for p in judged)  # no call for it
    assert row["llm_correct"] == pytest.approx(200 / 3) and row["llm_correct_answered"] == 100.0
    assert row["abstained"] == pytest.approx(100 / 3)


async def test_statuses_and_unusable_replies_per_100_calls_are_recorded(open_bridge, tmp_path: Path) -> None:  # noqa: ANN001
    answers = {"Who founded": "Answer: Alice Stone [1]", "Carol Diaz": "[1]", "valley": "Answer: Unknown"}

    def reply(request) -> str:  # noqa: ANN001 - by the question asked; a markers-only reply stays so on repair
        question = request.messages[0]["content"].rsplit("Question: ", 1)[1]
        return next(v for k, v in answers.items() if k in question)

    runner = EvalRunner(open_bridge(ScriptedBackend(rules=[("", reply)])), [MethodSpec.parse("naive")], tmp_path / "o")
    (row,) = await runner.run(load_questions(FIXTURES / "questions_small.jsonl"))
    assert row["statuses"] == {"abstained": 1, "answered": 1, "failed": 1}
    assert row["unusable_per_100_calls"] == pytest.approx(100 * 1 / 4)  # 1 + (1 + its repair) + 1 calls
    records = [json.loads(x) for x in (tmp_path / "o" / "records.jsonl").read_text().splitlines()]
    failed = next(r for r in records if r["status"] == "failed")
    assert failed["llm"] == {"repairs": 1, "parse_failures": 1} and "passage numbers only" in failed["message"]
