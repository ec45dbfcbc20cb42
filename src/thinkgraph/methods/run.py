"""The envelope every method call goes through, so that no method repeats it: the LLM requirement,
timing, the cost meter, the endpoint step of the trace, an empty answer made a failure, the top-k cut,
citations narrowed to their sentences with pages, and the edges among the evidence nodes. A method's
``answer`` returns its core result (text, status, citations, evidence, message, stats) with the steps
recorded on its context's trace; ``run_method`` returns it complete."""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from thinkgraph.config import DEFAULT_MAX_QUESTION_CHARS
from thinkgraph.errors import ConfigError, InputError
from thinkgraph.methods import catalog
from thinkgraph.methods.base import OUT_OF_SCOPE
from thinkgraph.methods.replies import EMPTY_ANSWER_MESSAGE
from thinkgraph.models import Answer, AnswerStatus, Cost, Edge, TraceStep

if TYPE_CHECKING:
    from thinkgraph.methods.base import Method
    from thinkgraph.retrieval.views import IndexView
    from thinkgraph.store.base import GraphStore

_MARKUP = re.compile(r"</?[A-Za-z_][\w-]*>|\[/?INST\]")
_WORD_CHARACTER = re.compile(r"[^\W_]")  # a letter or digit of any script


def has_content(text: str | None) -> bool:
    """Whether an answer says anything: a letter or digit once tags such as ``<answer>`` and chat
    markers are taken out (a small model's ``<answer>"`` is not an answer)."""
    return any(ch.isalnum() for ch in _MARKUP.sub("", text or ""))
# The LLM layer's counters, reported per question as the difference before and after it.
_LLM_COUNTERS = ("repairs", "parse_failures", "format_refusals", "truncations", "cut_replies")
EVIDENCE_EDGE_NODES = 60  # the evidence nodes whose edges are looked up when a method gave none


def _empty_answer(answer: Answer) -> bool:
    return answer.status in (AnswerStatus.ANSWERED, AnswerStatus.TRUNCATED) and not has_content(answer.text)


def check_question(question: str, max_chars: int = DEFAULT_MAX_QUESTION_CHARS) -> None:
    """One-line errors for a question no method can use: empty, without a word to search for (emoji or
    punctuation only: retrieval would rank passages by noise and rescale the best to a perfect score),
    longer than ``max_chars`` ([ask] max_question_chars), or not valid text."""
    if not question.strip():
        raise InputError("the question is empty")
    if len(question) > max_chars:
        raise InputError(f"the question is {len(question):,} characters long; the limit is {max_chars:,} "
                         "([ask] max_question_chars)")
    if not _WORD_CHARACTER.search(question):
        raise InputError("the question has no words to search for (only symbols, emoji or punctuation)")
    try:
        question.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(f"the question is not valid text (character {exc.start}: a lone surrogate)") from None


def llm_required_error(name: str) -> ConfigError:
    return ConfigError(f"method {name!r} needs an LLM endpoint (set THINKGRAPH_LLM_BASE_URL)")


async def run_method(method: Method, question: str, *, top_k: int | None = None) -> Answer:
    """Ask ``method`` (built on its context) and return the complete Answer."""
    ctx = method.ctx
    record = catalog.get(method.name)
    if record.needs_llm and ctx.llm is None:
        raise llm_required_error(method.name)
    llm = ctx.llm
    started = time.perf_counter()
    if llm is None:
        answer = await method.answer(question)
        cost = Cost()
    else:
        from thinkgraph.methods.reader import reading

        before = llm.describe()
        with llm.meter.scope() as cost, reading(ctx.settings.reader):  # the run's [reader] settings
            answer = await method.answer(question)
        if _empty_answer(answer):
            llm.meter.parse_failures += 1  # an unusable reply, counted with the others of the question
        answer.trace.append(_llm_step(before, llm.describe()))
    answer.cost = cost
    answer.cost.seconds = time.perf_counter() - started
    if _empty_answer(answer):
        # a failed answer has no text (the reply stays in the stats and the trace): `<answer>"` beside
        # "the model returned an empty answer" read as a contradiction
        answer.stats["unusable_reply"] = answer.text
        answer.status, answer.message, answer.text = AnswerStatus.FAILED, EMPTY_ANSWER_MESSAGE, None
    if top_k is not None:
        del answer.citations[top_k:]
    finish_evidence(answer, ctx.store, ctx.view)
    say_what_the_index_lacks(answer, record.name, record.needs(method.config), ctx.view)
    return answer


def say_what_the_index_lacks(answer: Answer, method: str, parts: frozenset[catalog.IndexPart],
                             view: IndexView) -> None:
    """The parts the method reads that the index lacks, one line each, in the message and the stats; not
    for a question the method judged out of the index's scope (no part would have answered it)."""
    from thinkgraph.methods.needs import index_lacks

    if answer.stats.get("outcome") == OUT_OF_SCOPE:
        return
    lacks = index_lacks(method, parts, view)
    if lacks:
        answer.stats["index_lacks"] = lacks
        answer.message = "; ".join([m for m in (answer.message,) if m] + lacks)


def finish_evidence(answer: Answer, store: GraphStore, view: IndexView | None = None) -> None:
    """Each citation narrowed to the sentences that answer, with its page; the evidence's edges."""
    from thinkgraph.citations import focus_answer

    chunks = store.get_nodes(list(dict.fromkeys(c.chunk_id for c in answer.citations)))
    focus_answer(answer, {n.id: n.text for n in chunks})
    _add_pages(answer, store)
    _connect_evidence(answer, store, view)


def _connect_evidence(answer: Answer, store: GraphStore, view: IndexView | None,
                      limit: int = EVIDENCE_EDGE_NODES) -> None:
    """The edges among the evidence nodes, when a method returned nodes without them, so that the
    evidence reads as a subgraph (a chunk and the entities it mentions, relations between them).
    Between entities and passages the view's graph says which pairs are linked, and each pair is read
    through its less connected node: asking the store for every edge of a hub (a country in 10^4
    passages) cost 60 ms a question at a million passages. Other nodes (facts, propositions,
    communities) are read through their own edges, kept where the other end is evidence too."""
    # the first ``limit`` nodes and every cited passage among them (topg lists 80 propositions before
    # its passages: their FROM edges to the passages were never looked up)
    cited = {c.chunk_id for c in answer.citations}
    nodes = list(dict.fromkeys([*(n.id for n in answer.evidence.nodes[:limit]),
                                *(n.id for n in answer.evidence.nodes if n.id in cited)]))
    if answer.evidence.edges or len(nodes) < 2:
        return
    graph = view.entity_passage_graph if view is not None else None
    inside = [n for n in nodes if graph is not None and n in graph.index]
    edges: list[Edge] = []
    if graph is not None and len(inside) > 1:
        rows = np.array(graph.rows(inside), dtype=np.int64)
        linked = sp.triu(graph.adjacency[rows][:, rows], k=1).tocoo()
        degree = np.diff(graph.adjacency.indptr)[rows]
        edges += store.edges_between([(inside[a], inside[b]) if degree[a] <= degree[b] else (inside[b], inside[a])
                                      for a, b in zip(linked.row.tolist(), linked.col.tolist(), strict=True)])
    known = set(inside)
    others = [n for n in nodes if n not in known]
    # each of the others' own edges read once (a proposition's few), not pair by pair (n^2 lookups)
    edges += store.edges_from(others, nodes)
    seen: set[tuple[str, str, str]] = set()
    for edge in edges:
        key = (edge.src, edge.dst, str(edge.type))
        if key not in seen:
            seen.add(key)
            answer.evidence.edges.append(edge)


def _add_pages(answer: Answer, store: GraphStore) -> None:
    """Page numbers for citations into paged documents (their page starts are kept on the node)."""
    from thinkgraph.ids import document_node_id
    from thinkgraph.index.formats import page_of

    docs = {c.doc_id for c in answer.citations}
    nodes = {n.props.get("doc_id"): n for n in store.get_nodes([document_node_id(d) for d in docs])}
    for citation in answer.citations:
        node = nodes.get(citation.doc_id)
        starts = node.props.get("page_starts") if node else None
        if starts and citation.start is not None:
            citation.page = page_of(starts, citation.start)


def _llm_step(before: dict[str, Any], after: dict[str, Any]) -> TraceStep:
    """The model and endpoint a question used, the structured-output form negotiated with it, and how
    many repairs, unusable replies, refused forms and cut prompts the question cost."""
    outputs = {k: v for k, v in after.items() if k not in _LLM_COUNTERS}
    outputs |= {k: after[k] - before[k] for k in _LLM_COUNTERS}
    return TraceStep(agent="llm", action="endpoint", outputs=outputs)
