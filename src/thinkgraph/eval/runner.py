"""The evaluation runner: several methods (and method settings) on one index, per-question records
in JSONL (a re-run skips what is recorded, so a killed run resumes), and a summary per method."""

from __future__ import annotations

import asyncio
import json
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from thinkgraph.api import ThinkGraph
from thinkgraph.errors import ConfigError, ThinkgraphError, UnknownMethodError
from thinkgraph.eval.accuracy import answer_accuracy
from thinkgraph.eval.datasets import Question
from thinkgraph.eval.judges import judge_correct
from thinkgraph.eval.metrics import exact_match, percentile, recall_at_k, rouge_l, substring_match, token_f1
from thinkgraph.eval.taxonomy import error_type
from thinkgraph.eval.verdicts import verdict_log
from thinkgraph.methods import catalog
from thinkgraph.models import Answer, AnswerStatus

# Methods whose wrong answers get the error taxonomy of KG-grounded reasoning (eval/taxonomy.py); the
# others report an outcome too (tog3's termination, a2rag's verification), but the taxonomy is kgr's.
TAXONOMY_METHODS = frozenset({"kgr"})
RECORDS_FILE = "records.jsonl"


@dataclass(frozen=True)
class MethodSpec:
    """``name`` or ``name:key=value,key=value`` (the whole text is the label)."""

    label: str
    method: str
    options: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> MethodSpec:
        name, _, rest = text.partition(":")
        options: dict[str, Any] = {}
        for pair in filter(None, rest.split(",")):
            key, sep, raw = pair.partition("=")
            if not sep:
                raise ConfigError(f"method option {pair!r} in {text!r} is not key=value")
            try:
                options[key.strip()] = json.loads(raw)
            except json.JSONDecodeError:
                options[key.strip()] = raw
        if name.strip() not in catalog.METHOD_NAMES:
            raise UnknownMethodError(f"unknown method {name.strip()!r} in {text!r}; valid methods: "
                                     f"{', '.join(catalog.METHOD_NAMES)}")
        return cls(text, name.strip(), options)


def retrieval_options(method: str, options: dict[str, Any], depth: int) -> dict[str, Any]:
    """A retrieval-only run's options: the method's evidence deepened to ``depth`` (enough for
    Recall@10) and its other retrieval-only defaults (catalog ``eval_depth``, ``eval_options``); the
    given options win."""
    record = catalog.get(method)
    return {**dict.fromkeys(record.eval_depth, depth), **record.eval_options, **options}


def retrieved_documents(answer: Answer) -> list[str]:
    """The documents of every passage the method retrieved, best first (its evidence), then those it
    cited: Recall@k measures retrieval whether or not an LLM answered and cited."""
    found = [str(n.props["doc_id"]) for n in answer.evidence.nodes if n.type == "chunk" and n.props.get("doc_id")]
    return list(dict.fromkeys([*found, *(c.doc_id for c in answer.citations)]))


def score(question: Question, text: str | None, retrieved: list[str],
          cited: list[str] | None = None) -> dict[str, float]:
    metrics: dict[str, float] = {}
    if question.answers:
        f1 = token_f1(text, question.answers)
        metrics |= {"em": exact_match(text, question.answers), "em_substring": substring_match(text, question.answers),
                    "f1": f1.f1, "precision": f1.precision, "recall": f1.recall,
                    "rouge_l": rouge_l(text, question.answers)}
    if question.supporting_ids:
        metrics |= {f"recall@{k}": recall_at_k(retrieved, question.supporting_ids, k) for k in (2, 5, 10)}
        if cited is not None:  # gold passages among the answer's citations (any number of them)
            metrics["citation_recall"] = recall_at_k(cited, question.supporting_ids, max(len(cited), 1))
    return metrics


def metric_order(key: str) -> tuple[str, int, str]:
    """Metrics by name, those at a cut-off by its number: recall@2, recall@5, recall@10 (not @10 first)."""
    name, _, k = key.partition("@")
    return name, int(k) if k.isdigit() else -1, key


def llm_counters(answer: Answer) -> dict[str, int]:
    """The question's repairs and unusable replies (after the bounded repairs), from its LLM trace step."""
    step = next((t for t in answer.trace if t.agent == "llm" and t.action == "endpoint"), None)
    outputs = step.outputs if step is not None else {}
    return {k: int(outputs.get(k, 0)) for k in ("repairs", "parse_failures")}


def metric_means(records: Sequence[dict[str, Any]], keys: Sequence[str]) -> dict[str, float]:
    """Each metric's mean over the records that have it, in percent."""
    out = {}
    for key in keys:
        values = [r["metrics"][key] for r in records if key in r["metrics"]]
        out[key] = 100 * statistics.mean(values) if values else 0.0
    return out


def method_stats(per_question: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Method-specific figures over questions: the mean of numbers (tog3 rounds, topg facts) and the
    counts of labels (a2rag's final stage, kgr's outcome)."""
    out: dict[str, Any] = {}
    for key in sorted({k for s in per_question for k in s}):
        values = [s[key] for s in per_question if key in s]
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
            out[key] = {"mean": statistics.mean(values), "max": max(values)}
        else:
            out[key] = dict(sorted(Counter(str(v) for v in values).items()))
    return out


class EvalRunner:
    def __init__(self, tg: ThinkGraph, specs: Sequence[MethodSpec], out_dir: str | Path, *,
                 retrieval_only: bool = False, concurrency: int = 4, depth: int = 10,
                 judge: bool = False, accuracy: bool = False) -> None:
        self.tg = tg
        self.specs = list(specs)
        self.out = Path(out_dir)
        self.retrieval_only = retrieval_only
        self.concurrency = concurrency
        self.depth = depth
        self.judge = judge
        self.accuracy = accuracy
        if (judge or accuracy) and (retrieval_only or tg.llm is None):
            raise ConfigError("LLM judging needs an LLM endpoint and a run that is not retrieval-only")
        if not retrieval_only and tg.llm is None:  # EM/F1 of no answer would read as 0, not as missing
            raise ConfigError("answer metrics (EM, F1, Rouge-L) need an LLM endpoint (set THINKGRAPH_LLM_BASE_URL); "
                              "without one, run with --retrieval-only for Recall@k")
        for spec in self.specs:  # one question must not change the index the next one (or method) reads
            isolation = catalog.get(spec.method).isolation
            changed = {k: v for k, v in spec.options.items() if k in isolation and v != isolation[k]}
            if changed:
                raise ConfigError(f"{spec.label}: {', '.join(f'{k}={v}' for k, v in changed.items())} would let one "
                                  "question change the index the others are asked on; eval runs it with "
                                  f"{', '.join(f'{k}={v}' for k, v in isolation.items())}")
        if retrieval_only:
            # No retriever to measure without an LLM: ircot's later queries are the model's thoughts,
            # kgr's graph walk is the model's actions. `none` retrieves nothing by definition (Recall 0).
            blocked = [s.method for s in self.specs if catalog.get(s.method).needs_llm
                       and catalog.get(s.method).retrieves]
            if blocked:
                raise ConfigError(f"method(s) {', '.join(blocked)} have no retrieval-only mode")

    def _done(self) -> set[tuple[str, str]]:
        path = self.out / RECORDS_FILE
        if not path.exists():
            return set()
        done = set()
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
                done.add((record["label"], record["qid"]))
            except (json.JSONDecodeError, KeyError):
                continue  # a line cut by a kill: that question runs again
        return done

    def missing(self, questions: Sequence[Question]) -> bool:
        """Whether any (method, question) pair still has no record."""
        done = self._done()
        return any((spec.label, q.id) not in done for spec in self.specs for q in questions)

    def _options(self, spec: MethodSpec) -> dict[str, Any]:
        options = dict(spec.options)
        if self.retrieval_only:
            options = retrieval_options(spec.method, options, self.depth)
        return {**options, **catalog.get(spec.method).isolation}

    async def run(self, questions: Sequence[Question]) -> list[dict[str, Any]]:
        self.out.mkdir(parents=True, exist_ok=True)
        done = self._done()
        semaphore = asyncio.Semaphore(self.concurrency)
        with (self.out / RECORDS_FILE).open("a", encoding="utf-8") as sink:
            for spec in self.specs:
                todo = [q for q in questions if (spec.label, q.id) not in done]

                async def one(q: Question, spec: MethodSpec = spec) -> None:
                    async with semaphore:
                        record = await self._record(spec, q)
                    sink.write(json.dumps(record, ensure_ascii=False) + "\n")
                    sink.flush()

                await asyncio.gather(*(one(q) for q in todo))
        rows = self.summary(questions)
        (self.out / "summary.json").write_text(json.dumps(rows, indent=2), encoding="utf-8")
        return rows

    async def _record(self, spec: MethodSpec, q: Question) -> dict[str, Any]:
        base = {"label": spec.label, "method": spec.method, "qid": q.id, "question": q.question, "type": q.type}
        if self.retrieval_only and not catalog.get(spec.method).retrieves:
            return base | {"status": "evidence_only", "answer": None, "retrieved": [],
                           "metrics": score(q, None, []), "cost": {}, "stats": {}}
        try:
            answer = await self.tg.aask(q.question, spec.method, **self._options(spec))
        except ThinkgraphError as exc:
            return base | {"status": "error", "error": str(exc), "metrics": {}, "cost": {}}
        retrieved = retrieved_documents(answer)
        cited = list(dict.fromkeys(c.doc_id for c in answer.citations))
        metrics = score(q, None if self.retrieval_only else answer.text, retrieved,
                        None if self.retrieval_only else cited)
        judge_failures = 0
        if self.judge and q.answers and self.tg.llm is not None:
            # an abstention, a failure or "Unknown" is not a correct answer, whatever its text
            given = answer.text if answer.status == AnswerStatus.ANSWERED else None
            verdict = await judge_correct(self.tg.llm, q.question, list(q.answers), given)
            if verdict is not None:  # an unparseable verdict is left out of the mean, and counted
                metrics["llm_correct"] = verdict
            judge_failures += verdict is None
        if self.accuracy and q.answers and self.tg.llm is not None:
            graded = await answer_accuracy(self.tg.llm, self.tg.embedder, q.question, q.answers[0], answer.text)
            if graded is not None:
                metrics |= {"accuracy": graded.accuracy, "factual_f1": graded.factual_f1,
                            "similarity": graded.similarity}
            judge_failures += graded is None
        stats = dict(answer.stats)
        if spec.method in TAXONOMY_METHODS and q.answers and not self.retrieval_only:
            correct = metrics.get("llm_correct", metrics.get("em_substring", 0.0)) == 1.0
            stats["error_type"] = "correct" if correct else \
                await error_type(answer, list(q.answers), self.tg.llm if self.judge else None)
        return base | {"status": answer.status, "answer": answer.text, "retrieved": retrieved, "cited": cited,
                       "metrics": metrics, "cost": asdict(answer.cost), "stats": stats,
                       "judge_failures": judge_failures, "message": answer.message, "llm": llm_counters(answer),
                       **({"verdicts": verdicts} if (verdicts := verdict_log(answer)) else {})}

    def summary(self, questions: Sequence[Question]) -> list[dict[str, Any]]:
        wanted = {q.id for q in questions}
        records: dict[str, list[dict[str, Any]]] = {}
        path = self.out / RECORDS_FILE
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        for line in lines:
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue
            if r.get("qid") in wanted:
                records.setdefault(r["label"], []).append(r)
        rows = []
        for spec in self.specs:
            rs = records.get(spec.label, [])
            row: dict[str, Any] = {"method": spec.label, "questions": len(rs),
                                   "errors": sum(r["status"] == "error" for r in rs)}
            if self.judge or self.accuracy:
                row["judge_failures"] = sum(r.get("judge_failures", 0) for r in rs)
            keys = sorted({k for r in rs for k in r["metrics"]}, key=metric_order)
            if self.retrieval_only:
                keys = [k for k in keys if k.startswith("recall@")]
            row |= metric_means(rs, keys)
            if not self.retrieval_only and rs:  # verified-or-abstain methods: how often they declined
                row["abstained"] = 100 * sum(r["status"] == "abstained" for r in rs) / len(rs)
                row["statuses"] = dict(sorted(Counter(str(r["status"]) for r in rs).items()))
                calls = sum((r["cost"] or {}).get("calls", 0) for r in rs)
                unusable = sum((r.get("llm") or {}).get("parse_failures", 0) for r in rs)
                row["unusable_per_100_calls"] = 100 * unusable / calls if calls else 0.0
                answered = [r for r in rs if r["status"] == "answered"]
                for key in ("llm_correct", "accuracy"):  # over all questions above; over answered ones here
                    if key in keys:
                        row[f"{key}_answered"] = metric_means(answered, [key])[key] if answered else 0.0
            variants = Counter(str((r.get("stats") or {}).get("variant")) for r in rs
                               if (r.get("stats") or {}).get("variant"))
            if variants:  # an LLM-free stand-in ran, not the method: the report names what ran
                row["variant"] = "; ".join(variants)
            types = sorted({r.get("type") or "" for r in rs} - {""})
            if types:
                row["by_type"] = {t: {"questions": sum(r.get("type") == t for r in rs),
                                      **metric_means([r for r in rs if r.get("type") == t], keys)} for t in types}
            costs = [r["cost"] for r in rs if r["cost"]]
            for name in ("calls", "prompt_tokens", "completion_tokens", "seconds"):
                values = [c[name] for c in costs]
                row[f"{name}_mean"] = statistics.mean(values) if values else 0.0
                row[f"{name}_p50"] = statistics.median(values) if values else 0.0
                row[f"{name}_p95"] = percentile(values, 95)
            stats = method_stats([{k: v for k, v in (r.get("stats") or {}).items() if k != "variant"} for r in rs])
            if stats:
                row["stats"] = stats
            rows.append(row)
        return rows


async def pairwise(tg: ThinkGraph, out_dir: str | Path, questions: Sequence[Question], reference: str,
                   labels: Sequence[str]) -> dict[str, Any]:
    """Each label against the reference with the pairwise judge (both orders) on every question: win
    rates per criterion with their bootstrap intervals, ELO ratings with the reference at 1600 (ToG-3
    App. F.3), the count of each kind of decision and the judge's explanations. Written to
    pairwise.json (eval/pairwise.py says how abstentions and ties count)."""
    from thinkgraph.eval.pairwise import compare, load_records

    if tg.llm is None:
        raise ConfigError("pairwise judging needs an LLM endpoint")
    out = Path(out_dir)
    records = load_records(out / RECORDS_FILE)
    if reference not in records:
        raise ConfigError(f"no recorded answers for the reference {reference!r}")
    result = await compare(tg.llm, questions, records, reference, labels)
    (out / "pairwise.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    return result
