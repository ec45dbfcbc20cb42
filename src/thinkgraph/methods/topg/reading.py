"""ToPG's stop and answer with the one reader (``reader="shared"``): Eval asks only whether the collected
facts answer the question, its reason first and "yes"/"no" last (P(yes) against ``eval_threshold``
where the server gives log-probabilities); the answer is then read by the shared reader from the
passages the facts come from, in the facts' order (``reader_facts`` of the facts beside them: none by
default), the first of them followed (``reader_fill = "walk"``) by the passages the shared walk from the
first facts' entities reaches (topg/fill.py). The paper's Eval, which writes the answer inside its JSON
verdict from the bare propositions, is ``reader="paper"``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from thinkgraph.errors import StructuredOutputError
from thinkgraph.llm.judgement import YesNoVerdict, judged
from thinkgraph.llm.service import LLM
from thinkgraph.methods.layout import Notes, question_prompt
from thinkgraph.methods.reader import ReaderInput, read
from thinkgraph.methods.replies import AnswerReply
from thinkgraph.methods.topg.fill import WalkFill
from thinkgraph.methods.topg.prompts import EVAL_STOP
from thinkgraph.methods.topg.suggest import Suggester
from thinkgraph.models import TraceStep
from thinkgraph.retrieval.evidence import ScoredPassage, passages_from_scores
from thinkgraph.retrieval.fusion import filled, interleaved
from thinkgraph.store.base import GraphStore

FACTS_TITLE = "Facts selected from the knowledge graph"
ANSWER_STEP = "topg.answer"  # streamed (methods/catalog.py answer_steps)


@dataclass
class FactReader:
    suggester: Suggester
    store: GraphStore
    threshold: float
    passages: int  # how many the reader reads
    noted: int  # how many of the facts are shown beside them (their passages carry the rest)
    fill: WalkFill | None = None  # reader_fill = "walk"
    fill_passages: int = 0  # the passages the walk takes at least, after those of the first facts

    def facts(self, props: Sequence[int]) -> str:
        return "\n".join(f"[{i}] {self.suggester.graph.texts[p]}" for i, p in enumerate(props, 1))

    async def answerable(self, llm: LLM, question: str, found: Sequence[int], trace: list[TraceStep],
                         iteration: int) -> bool:
        """Eval as a stop judgement; an unusable verdict is "not yet" (the loop goes on)."""
        messages = question_prompt(f"Facts:\n{self.facts(found) or '(none)'}", EVAL_STOP, question)
        try:
            verdict, p_yes = await llm.judge(messages, YesNoVerdict, keys=("verdict",), step="topg.eval")
        except StructuredOutputError:
            return False
        judgement = judged(verdict, p_yes, "verdict", self.threshold, verdict.reason)
        trace.append(TraceStep("evaluator", "eval", {"iteration": iteration, "facts": len(found)},
                               {"answerable": judgement.passed, **judgement.trace()}))
        return judgement.passed

    async def answer(self, llm: LLM, question: str, found: Sequence[int], trace: list[TraceStep],
                     rounds: Sequence[Sequence[int]] = ()) -> tuple[AnswerReply[ScoredPassage], list[str]]:
        """The one reader over the passages of the collected facts, the facts as its notes; with
        ``rounds`` (the facts each step of the search added), the rounds' passages in turn, so that a
        later hop's passage is read beside the entry's. Also the passages it read, in its order."""
        ids, walked = self.passage_ids(question, found, rounds)
        passages = passages_from_scores(self.store, [(c, 0.0) for c in ids])
        notes = [Notes(FACTS_TITLE, [self.suggester.graph.texts[p] for p in found[: self.noted]])]
        inputs: dict[str, object] = {"facts": len(found)}
        if self.fill is not None:
            inputs["walked"] = [c for c in ids if c in walked]
        asked, _ = await read(llm, ReaderInput(question, passages, notes), step=ANSWER_STEP, trace=trace,
                              inputs=inputs)
        return asked.read, ids

    def passage_ids(self, question: str, found: Sequence[int],
                    rounds: Sequence[Sequence[int]] = ()) -> tuple[list[str], set[str]]:
        """The passages the reader reads, and those of them the walk added: the facts' passages (each
        round's in turn with ``rounds``); with a fill, those of the first facts up to all but
        ``fill_passages`` of the reader's and the walk's from the first facts' entities, the walk's after
        the first (``fusion.filled``), then the rest."""
        own = interleaved([self.suggester.passages_of(r) for r in rounds or [found]])
        if self.fill is None:
            return own[: self.passages], set()
        ids = filled(own, self.fill(question, found[: self.passages]), self.passages, self.fill_passages)
        return ids, set(ids) - set(own[: self.passages])
