"""The trajectory H of one MACER run (Alg. 2: sub-queries, their answers, rewards and subgraphs) and
the final synthesis a* = pi_resp^final(q, H_K) over the evidence of every subgraph along it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from thinkgraph.llm.service import LLM
from thinkgraph.methods import answer_shape
from thinkgraph.methods.choice import same_choice
from thinkgraph.methods.layout import Notes
from thinkgraph.methods.reader import ReaderInput, read
from thinkgraph.methods.replies import AnswerReply, answer_format, answer_trace, ask_answer, is_abstention
from thinkgraph.methods.synthesis import PROMPT_OVERHEAD_TOKENS, fit_passages, numbered_passages
from thinkgraph.methods.tog3.agents import Retriever
from thinkgraph.methods.tog3.fill import walk_filled
from thinkgraph.methods.tog3.prompts import FINAL
from thinkgraph.methods.tog3.subgraph import Subgraph, Triple, merge_types
from thinkgraph.models import TraceStep
from thinkgraph.retrieval.compaction import stems
from thinkgraph.retrieval.evidence import ScoredPassage, passages_from_scores
from thinkgraph.store.base import GraphStore

# What a question asks for, coarsely: a time, a place, a reason, a manner or amount, else a thing (who,
# what, which: "Which team did ...?" asks what "Who did ...?" asks), or yes/no (no wh-word).
_WH_WORD = re.compile(r"\b(who|whom|whose|what|which|when|where|why|how)\b", re.IGNORECASE)
_ASKS = {"when": "time", "where": "place", "why": "reason", "how": "manner"}
_NEGATED = re.compile(r"\b(?:not|never|no)\b|n't\b", re.IGNORECASE)


def _asks(text: str) -> tuple[str, bool]:
    found = _WH_WORD.search(text)
    word = found.group(1).casefold() if found else ""
    return _ASKS.get(word, "thing" if word else "yes/no"), bool(_NEGATED.search(text))


def restates(sub_query: str, question: str) -> bool:
    """Whether an evolved sub-query asks the question again: the same content words (as stems) in any
    order or wording ("Which team did X's team play ...?" for "Who did X's team play ...?"), asking for
    the same kind of thing (a time is not a person: "When was Jaws directed?" is not "Who directed
    Jaws?"), negated alike, or one that offers the question's own two options (``choice.same_choice``: "Who
    is American, Mark King or Nick Hexum?" for "Which singer is American, ...?": it poses the whole choice,
    and its answer is one more draft of the question's). A sub-query with no content word restates nothing."""
    if same_choice(sub_query, question):
        return True
    words = stems(sub_query)
    return bool(words) and words == stems(question) and _asks(sub_query) == _asks(question)


def usable(answer: str, question: str) -> bool:
    """Whether an answer tells the reader something: not empty, no abstention, and not of a kind its
    question rules out (``answer_shape.kind_mismatch``: a bare date for "who", no number for "how many")."""
    return bool(answer.strip()) and not is_abstention(answer) \
        and answer_shape.kind_mismatch(answer_shape.short_answer(answer, question), question) is None


@dataclass
class Step:
    """One entry of H: the evolved sub-query q'_k, its answer on G_{k+1}, the answer a_k to q and the
    reward r_k of the round that led to it, and the resulting subgraph G_{k+1}."""

    sub_query: str
    sub_answer: str
    answer: str
    reward: int
    subgraph: Subgraph


@dataclass
class Trajectory:
    question: str
    graphs: list[Subgraph] = field(default_factory=list)  # G_0, G_1, ... (every subgraph reached)
    answers: list[str] = field(default_factory=list)  # a_0, a_1, ... (the Responser's answers to q)
    steps: list[Step] = field(default_factory=list)
    rounds: int = 0
    reward: int = 0
    outcome: str = "horizon"  # sufficient | reflector_stop | horizon | budget_reached

    def add_step(self, sub_query: str, sub_answer: str, answer: str, reward: int, graph: Subgraph) -> None:
        self.steps.append(Step(sub_query, sub_answer, answer, reward, graph))

    def lines(self) -> list[str]:
        """Each round's answer to the question, then the sub-question it evolved and its answer."""
        out: list[str] = []
        for k, answer in enumerate(self.answers):
            out.append(f"- {self.question} -> {answer}")
            if k < len(self.steps):
                out.append(f"- {self.steps[k].sub_query} -> {self.steps[k].sub_answer}")
        return out

    def known_answers(self) -> list[str]:
        """The sub-questions answered along the way, and the answer to the question the Reflector judged
        sufficient, "Unknown" (an abstention) left out: an unanswered sub-question tells the reader nothing
        but invites it to abstain. A round's answer the Reflector judged insufficient is left out too:
        shown as known, a small reader took it for the answer ("Christopher Nolan" for the director of the
        film shot near Leland, where the passages it read named Stephen King). So is the answer to a
        sub-question that restates the question (``restates``; Fig. 14 allows it): one more draft answer to
        the question, which no Reflector accepted (Qwen2.5-1.5B restated the question in 20 of the 33
        evolutions on the first 20 + 20 dev questions, and answered Leland's again "Christopher Nolan").
        An answer that cannot be of the kind its question asks for (``answer_shape.kind_mismatch``: "484"
        for "Which of the two tornado outbreaks killed the most people?") is left out, accepted or not."""
        accepted = self.answers[-1:] if self.outcome == "sufficient" else []
        pairs = [(self.question, a) for a in accepted] + [
            (s.sub_query, s.sub_answer) for s in self.steps if not restates(s.sub_query, self.question)]
        return list(dict.fromkeys(f"{q} -> {a}" for q, a in pairs if usable(a, q)))

    def passage_ids(self) -> list[str]:
        """Passages of every subgraph, interleaved by rank (each subgraph's best first), once each."""
        out: list[str] = []
        for rank in range(max((len(g.passages) for g in self.graphs), default=0)):
            for g in self.graphs:
                if rank < len(g.passages) and g.passages[rank] not in out:
                    out.append(g.passages[rank])
        return out

    def triples(self, limit: int) -> list[Triple]:
        """The latest subgraph's (most refined) triples first, then earlier ones, once each."""
        return list(dict.fromkeys(t for g in reversed(self.graphs) for t in g.triples))[:limit]

    def communities(self) -> list[str]:
        return list(dict.fromkeys(c for g in self.graphs for c in g.communities))

    def evidence(self, shown: list[ScoredPassage], limit: int = 30) -> Subgraph:
        triples = self.triples(limit)
        known = merge_types(reversed(self.graphs))
        return Subgraph(passages=[p.chunk_id for p in shown], triples=triples, communities=self.communities(),
                        types={t: known[t] for t in triples if t in known})


async def synthesise(llm: LLM, store: GraphStore, run: Trajectory, retriever: Retriever,
                     trace: list[TraceStep]) -> tuple[AnswerReply[ScoredPassage], list[ScoredPassage]]:
    """The final answer from H and the trajectory's evidence: its facts, community summaries and as
    many of its passages as the context window holds (numbered, so that the answer can cite them).
    Returns the reply as read and the passages shown."""
    limit = retriever.config.max_triples_shown
    facts = "\n".join(f"{s} -> {p} -> {o}" for s, p, o in run.triples(limit))
    summaries = "\n".join(f"Summary: {n.text}" for n in store.get_nodes(run.communities()))
    fixed = "\n\n".join(x for x in (f"Facts:\n{facts}" if facts else "", summaries) if x)
    trajectory = "\n".join(run.lines()) or "(none)"
    budget = llm.settings.context_window - llm.settings.max_tokens.answer - PROMPT_OVERHEAD_TOKENS \
        - llm.counter.count(run.question + trajectory + fixed)
    candidates = passages_from_scores(store, [(cid, 0.0) for cid in run.passage_ids()])
    shown = fit_passages(candidates, budget, llm.counter)
    context = "\n\n".join(x for x in (fixed, numbered_passages(shown)) if x) or "(empty)"
    prompt = FINAL.format(query=run.question, trajectory=trajectory, context=context,
                          answer_format=answer_format(question=run.question))
    asked = await ask_answer(llm, [{"role": "user", "content": prompt}], shown, step="tog3.final",
                             prompt_template=FINAL)
    trace.append(answer_trace("responser", "final", "FINAL", asked, {
        "rounds": run.rounds, "evolutions": len(run.steps), "passages": [p.chunk_id for p in shown],
        "left_out": len(candidates) - len(shown)}, len(shown)))
    return asked.read, shown


async def read_trajectory(llm: LLM, store: GraphStore, run: Trajectory, retriever: Retriever,
                          trace: list[TraceStep]) -> tuple[AnswerReply[ScoredPassage], list[ScoredPassage]]:
    """The final answer by the one reader (``reader="shared"``): the trajectory's passages (each
    subgraph's best first; with ``reader_fill="walk"``, the shared walk's from their entities in part,
    tog3/fill.py), with the sub-answers that are not "Unknown" and the round answer the Reflector judged
    sufficient (``Trajectory.known_answers``), and with ``reader_notes="all"`` the final subgraph's triples and
    the community summaries, as its notes."""
    limit = retriever.config.max_triples_shown
    notes = [Notes("Sub-questions answered along the way (sub-question -> answer)", run.known_answers())]
    if retriever.config.reader_notes == "all":
        notes += [Notes("Facts from the knowledge graph (subject -> relation -> object)",
                        [f"{s} -> {p} -> {o}" for s, p, o in run.triples(limit)]),
                  Notes("Summaries of related parts of the graph",
                        [n.text for n in store.get_nodes(run.communities())])]
    own, walk = run.passage_ids(), retriever.config.reader_fill == "walk"
    ids = walk_filled(retriever, run.question, own) if walk else own
    candidates = passages_from_scores(store, [(cid, 0.0) for cid in ids])
    inputs: dict[str, object] = {"rounds": run.rounds, "evolutions": len(run.steps)}
    if walk:  # the passages the walk added, which the trajectory's own would not have given
        inputs["walked"] = [c for c in ids if c not in own[: len(ids)]]
    asked, shown = await read(llm, ReaderInput(run.question, candidates, notes), step="tog3.final", trace=trace,
                              agent="responser", inputs=inputs)
    return asked.read, shown
