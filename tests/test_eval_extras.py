"""Evaluation harness extras: benchmark question formats, GraphRAG-Bench answer accuracy, method
statistics, the extraction-loss stress test, abstract question generation, plots and the report."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from support import FIXTURES, HashEmbedder
from thinkgraph.config import LLMSettings
from thinkgraph.errors import InputError
from thinkgraph.eval.accuracy import answer_accuracy, factual_f1
from thinkgraph.eval.datasets import load_questions
from thinkgraph.eval.loss import LossSetting, degraded_copy, loss_settings, parse_fractions, run_extraction_loss
from thinkgraph.eval.runner import EvalRunner, MethodSpec, method_stats
from thinkgraph.llm.service import LLM
from thinkgraph.models import NodeType
from thinkgraph.testing import ScriptedBackend


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_grbench_ultradomain_and_json_array_question_files(tmp_path: Path) -> None:
    grbench = write(tmp_path / "g.jsonl", json.dumps({"qid": "easy_1", "question": "Who wrote paper P?",
                                                       "answer": "Ann", "level": "easy"}) + "\n")
    (q,) = load_questions(grbench)
    assert (q.id, q.answers, q.type) == ("easy_1", ("Ann",), "easy")
    ultra = write(tmp_path / "u.json", json.dumps([{"query": "What themes recur?"},
                                                   {"input": "How do X and Y differ?"}]))
    qs = load_questions(ultra)
    assert [x.question for x in qs] == ["What themes recur?", "How do X and Y differ?"] and qs[0].answers == ()
    assert [x.id for x in qs] == ["q1", "q2"]
    aliases = write(tmp_path / "a.jsonl", json.dumps({"id": 1, "question": "q", "answer": "x",
                                                      "answers": ["x", "y"]}) + "\n")
    assert load_questions(aliases)[0].answers == ("x", "y")
    with pytest.raises(InputError, match=r"b\.json\[1\]: field 'question'"):
        load_questions(write(tmp_path / "b.json", json.dumps([{"question": "ok"}, {"answer": "x"}])))
    with pytest.raises(InputError, match="id 'x' occurs more than once"):
        load_questions(write(tmp_path / "d.jsonl", '{"id": "x", "question": "a"}\n{"id": "x", "question": "b"}\n'))


def test_graphrag_bench_medical_questions_load_typed() -> None:
    shared = Path(__file__).parents[2] / "shared" / "data" / "graphrag_bench_medical" / "questions.jsonl"
    if not shared.exists():
        pytest.skip("../shared is not beside this clone")
    qs = load_questions(shared)
    assert len(qs) == 2062 and {q.type for q in qs} >= {"Fact Retrieval", "Complex Reasoning"}


def test_factual_f1_by_hand() -> None:
    assert factual_f1(2, 1, 1) == pytest.approx(2 / 3)  # 2 / (2 + 0.5 * 2)
    assert factual_f1(0, 0, 0) == 0.0 and factual_f1(3, 0, 0) == 1.0


async def test_answer_accuracy_combines_fact_check_and_similarity() -> None:
    embedder = HashEmbedder()
    reply = json.dumps({"supported": ["BCC is common"], "unsupported": ["it is rare in the face"],
                        "missed": ["it arises from basal cells"]})
    llm = LLM(ScriptedBackend(rules=[("Break the answer", reply)]), settings=LLMSettings(model="j"))
    score = await answer_accuracy(llm, embedder, "q?", "reference text", "answer text")
    vectors = embedder.embed(["answer text", "reference text"])
    similarity = float(np.clip(vectors[0] @ vectors[1], 0, 1))
    assert score is not None and score.factual_f1 == pytest.approx(0.5)
    assert score.accuracy == pytest.approx(0.75 * 0.5 + 0.25 * similarity)
    assert (await answer_accuracy(llm, embedder, "q?", "ref", "  ")).accuracy == 0.0  # type: ignore[union-attr]
    broken = LLM(ScriptedBackend(rules=[("Break the answer", "not json at all")]), settings=LLMSettings(model="j"))
    assert await answer_accuracy(broken, embedder, "q?", "ref", "answer") is None


async def test_accuracy_through_the_runner_by_question_type(open_bridge, tmp_path: Path) -> None:  # noqa: ANN001
    reply = json.dumps({"supported": ["a"], "unsupported": [], "missed": []})
    tg = open_bridge(ScriptedBackend(rules=[("Break the answer", reply), ("Passages:", "Alice Stone [1]")]))
    questions = write(tmp_path / "q.jsonl", "".join(json.dumps(q) + "\n" for q in [
        {"id": "1", "question": "Who founded it?", "answer": "Alice Stone", "type": "Fact Retrieval"},
        {"id": "2", "question": "Why?", "answer": "Because", "type": "Complex Reasoning"}]))
    (row,) = await EvalRunner(tg, [MethodSpec.parse("naive")], tmp_path / "out", accuracy=True).run(
        load_questions(questions))
    assert row["factual_f1"] == 100.0 and 75.0 <= row["accuracy"] <= 100.0
    assert set(row["by_type"]) == {"Fact Retrieval", "Complex Reasoning"}
    assert row["by_type"]["Fact Retrieval"]["questions"] == 1 and row["by_type"]["Fact Retrieval"]["em"] == 100.0


def test_method_stats_means_numbers_and_counts_labels() -> None:
    stats = method_stats([{"rounds": 1, "stage": "local"}, {"rounds": 3, "stage": "ppr"}, {"stage": "local"}])
    assert stats == {"rounds": {"mean": 2, "max": 3}, "stage": {"local": 2, "ppr": 1}}
    assert method_stats([]) == {}


async def test_a2rag_records_the_stage_each_question_ended_at(open_bridge, tmp_path: Path) -> None:  # noqa: ANN001
    tg = open_bridge()
    (row,) = await EvalRunner(tg, [MethodSpec.parse("a2rag")], tmp_path / "out", retrieval_only=True).run(
        load_questions(FIXTURES / "questions_small.jsonl"))
    assert sum(row["stats"]["stage"].values()) == 3
    assert set(row["stats"]["stage"]) <= {"local", "bridge", "ppr"}


def test_loss_fractions_and_settings() -> None:
    assert parse_fractions("0, 0.1,0.25") == [0.0, 0.1, 0.25]
    for bad in ("1.0", "x"):
        with pytest.raises(Exception, match="fraction"):
            parse_fractions(bad)
    settings = loss_settings([0.0, 0.2], 3)
    assert settings[0] == LossSetting(0.0, 0) and len(settings) == 4  # fraction 0 runs once


def test_degraded_copy_deletes_a_seeded_fraction_and_leaves_the_original(open_bridge, tmp_path: Path) -> None:  # noqa: ANN001
    tg = open_bridge()
    entities = tg.store.count_nodes()[NodeType.ENTITY]
    original = {n.id for n in tg.store.iter_nodes(NodeType.ENTITY)}
    chosen = []
    for seed in (0, 0, 1):
        target = tmp_path / f"copy-{len(chosen)}.db"
        deleted = degraded_copy(tg.store, target, LossSetting(0.5, seed))
        assert deleted == round(0.5 * entities)
        from thinkgraph.store.sqlite import SQLiteStore

        copy = SQLiteStore(target, create=False)
        left = {n.id for n in copy.iter_nodes(NodeType.ENTITY)}
        assert len(left) == entities - deleted
        gone = original - left
        assert not any(e.src in gone or e.dst in gone for e in copy.iter_edges())
        assert not set(copy.get_vectors([NodeType.ENTITY])[0]) & gone
        copy.close()
        chosen.append(left)
    assert chosen[0] == chosen[1] and chosen[0] != chosen[2]  # a seed is one choice
    assert tg.store.count_nodes()[NodeType.ENTITY] == entities


async def test_extraction_loss_run_averages_over_seeds_and_resumes(open_bridge, tmp_path: Path) -> None:  # noqa: ANN001
    tg = open_bridge()
    qs = load_questions(FIXTURES / "questions_small.jsonl")
    specs = [MethodSpec.parse("naive"), MethodSpec.parse("ppr")]
    settings = loss_settings([0.0, 0.6], 2)
    rows = await run_extraction_loss(tg, specs, tmp_path / "out", qs, settings)
    assert [(r["method"], r["fraction"], r["seeds"]) for r in rows] == [
        ("naive", 0.0, 1), ("ppr", 0.0, 1), ("naive", 0.6, 2), ("ppr", 0.6, 2)]
    naive = {r["fraction"]: r["recall@5"] for r in rows if r["method"] == "naive"}
    assert naive[0.0] == naive[0.6]  # dense passage retrieval does not use entities
    records = (tmp_path / "out" / "records.jsonl").read_text().splitlines()
    assert len(records) == 2 * 3 * 3 and not (tmp_path / "out" / "loss-indexes").exists()
    again = await run_extraction_loss(tg, specs, tmp_path / "out", qs, settings)
    assert again == rows and len((tmp_path / "out" / "records.jsonl").read_text().splitlines()) == 18


async def test_abstract_question_generation_users_tasks_questions(open_bridge, tmp_path: Path) -> None:  # noqa: ANN001
    from thinkgraph.eval.question_gen import generate_questions, write_questions

    users = json.dumps({"users": [{"user": "historian", "tasks": ["t1", "t2"]},
                                  {"user": "student", "tasks": ["t3", "t4", "t5"]}]})

    def questions_for(request) -> str:  # noqa: ANN001
        prompt = request.messages[0]["content"]
        if "Task: t4" in prompt:
            return "no questions here"  # unparseable twice: that (user, task) is skipped
        task = prompt.split("Task: ")[1].split("\n")[0]
        return json.dumps({"questions": [f"{task} question {i}?" for i in range(3)]})

    backend = ScriptedBackend(rules=[("Below are short descriptions", "A collection about towns."),
                                     ("Imagine 2 different people", users),
                                     ("Write 2 questions", questions_for)])
    tg = open_bridge(backend)
    made = await generate_questions(tg.store, tg.llm, n_users=2, n_tasks=2, n_questions=2)
    assert [q.task for q in made] == ["t1", "t1", "t2", "t2", "t3", "t3"]  # t5 is past n_tasks, t4 failed
    assert made[0].user == "historian" and made[0].question == "t1 question 0?"
    assert len({q.id for q in made}) == 6
    path = write_questions(tmp_path / "abstract.jsonl", made)
    loaded = load_questions(path)
    assert len(loaded) == 6 and loaded[0].type == "abstract" and loaded[0].answers == ()


def test_plots_are_png_files(tmp_path: Path) -> None:
    from thinkgraph.eval import plots

    rows = [{"method": "naive", "f1": 40.0, "prompt_tokens_mean": 900.0, "completion_tokens_mean": 20.0},
            {"method": "tog3", "f1": 55.0, "prompt_tokens_mean": 5000.0, "completion_tokens_mean": 300.0}]
    loss = [{"method": "ppr", "fraction": f, "seeds": 1, "recall@5": 70 - 50 * f} for f in (0.0, 0.2, 0.4)]
    judged = {"reference": "naive", "methods": {"tog3": {"pairs": 3, "criteria": {
        "overall": {"elo": 1700.0}, "diversity": {"elo": None}}}}}
    for made in (plots.quality_vs_tokens(rows, tmp_path / "a.png"), plots.loss_curves(loss, tmp_path / "b.png"),
                 plots.elo_heatmap(judged, tmp_path / "c.png")):
        assert made is not None and made.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and made.stat().st_size > 2000
    assert plots.quality_vs_tokens([], tmp_path / "d.png") is None and plots.quality_metric(rows) == "f1"


def test_report_has_types_stats_loss_and_plots(tmp_path: Path) -> None:
    from thinkgraph.eval.report import render_report

    columns = ("calls", "prompt_tokens", "completion_tokens", "seconds")
    cost = {f"{c}_{s}": 1.0 for c in columns for s in ("mean", "p95")}
    rows = [{"method": "a2rag", "questions": 2, "errors": 0, "f1": 50.0, **cost,
             "by_type": {"easy": {"questions": 2, "f1": 50.0}},
             "stats": {"stage": {"local": 1, "ppr": 1}, "attempts": {"mean": 1.5, "max": 2}}}]
    loss = [{"method": "a2rag", "fraction": 0.2, "seeds": 3, "recall@5": 61.25}]
    text = render_report(rows, title="t", loss=loss, plots=[tmp_path / "quality_vs_tokens.png"])
    assert "| a2rag | easy | 2 | 50.0 |" in text
    assert "| a2rag | stage | local: 1, ppr: 1 |" in text and "mean 1.50, max 2" in text
    assert "| a2rag | 20 | 3 | 61.2 |" in text or "| a2rag | 20 | 3 | 61.3 |" in text
    assert "![quality_vs_tokens](quality_vs_tokens.png)" in text
