"""Reasoning states: a chain of steps, each grounded in graph nodes, with its parents (two for a
GoT merge), its score and, once finished, its answer."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import count
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from thinkgraph.methods.replies import AnswerReply

_BRACKETS = re.compile(r"\[([^\[\]]*)\]")
SHORT_OBSERVATION = 300  # characters of an old observation kept when the scratchpad is over its bound
SHORTENED = " ... (shortened)"
CUT_TO = 0.75  # a prefix-stable scratchpad over its bound is cut to this share of it (``observations``)


@dataclass(eq=False)
class Step:
    thought: str
    action: str = ""
    observation: str = ""
    nodes: list[str] = field(default_factory=list)  # external ids of the nodes this step touched
    triples: list[tuple[str, str, str]] = field(default_factory=list)
    attributes: list[str] = field(default_factory=list)
    merged: bool = False


@dataclass(eq=False)
class ChainState:
    id: int
    steps: list[Step] = field(default_factory=list)
    parents: tuple[int, ...] = ()
    depth: int = 0
    answer: str | None = None
    score: float | None = None
    seen: dict[str, bool] = field(default_factory=dict)  # explore: linked node -> visited
    repairs: int = 0  # repair calls made for the chain's steps (KGRConfig.repair)
    # the reading of the answer when the chain was finished at the step limit (KGRConfig.finish_at_limit)
    final: AnswerReply[Any] | None = None

    def child(self, ids: count[int], step: Step, answer: str | None = None,
              seen: dict[str, bool] | None = None, *, repairs: int = 0) -> ChainState:
        return ChainState(next(ids), self.steps + [step], (self.id,), self.depth + 1, answer,
                          seen=dict(self.seen if seen is None else seen), repairs=self.repairs + repairs)

    @property
    def spent(self) -> int:
        """The chain's step budget used: its steps and their repair calls."""
        return self.depth + self.repairs

    @property
    def triples(self) -> list[tuple[str, str, str]]:
        return list(dict.fromkeys(t for s in self.steps for t in s.triples))

    @property
    def attributes(self) -> list[str]:
        return list(dict.fromkeys(a for s in self.steps for a in s.attributes))

    @property
    def nodes(self) -> list[str]:
        return list(dict.fromkeys(n for s in self.steps for n in s.nodes))

    def scratchpad(self, max_chars: int | None = None) -> str:
        """The steps as "Thought i / Action i / Observation i" lines (``max_chars``: see ``observations``)."""
        return self._lines(self.observations(max_chars))

    def observations(self, max_chars: int | None = None, *, stable: bool = False) -> list[str]:
        """The steps' observations as shown to the model. When the scratchpad would be over ``max_chars``,
        the oldest are shortened first (the latest two stay whole), so that a long chain still fits the
        context window with the prompt's closing lines, which a cut at the end would lose.

        ``stable`` (the agent's turns, ours): the cuts are made as the chain grew, step by step, and a
        step that goes over the bound cuts down to CUT_TO of it. The cuts shown at one step are then
        the cuts shown at the next, and the next several steps fit without a new one, so a server's
        prompt cache keeps the turns up to the newest cut (a cut to just under the bound would shorten
        the oldest whole observation again at every step, and the prompt would differ from there on)."""
        shown = [s.observation for s in self.steps]
        if max_chars is None:
            return shown
        for end in range(1, len(shown) + 1) if stable else [len(shown)]:
            if len(self._lines(shown[:end])) <= max_chars:
                continue
            target = int(max_chars * CUT_TO) if stable else max_chars
            for i in range(max(end - 2, 0)):
                if len(self._lines(shown[:end])) <= target:
                    break
                if len(shown[i]) > SHORT_OBSERVATION and not shown[i].endswith(SHORTENED):
                    shown[i] = shown[i][:SHORT_OBSERVATION] + SHORTENED
        return shown

    def _lines(self, observations: list[str]) -> str:
        """The lines of the chain's first steps, one for each of ``observations``."""
        lines = []
        for i, (s, observation) in enumerate(zip(self.steps[:len(observations)], observations, strict=True), 1):
            lines.append(f"Thought {i}: {s.thought}")
            if s.action:
                lines += [f"Action {i}: {s.action}", f"Observation {i}: {observation}"]
        return "\n".join(lines) + ("\n" if lines else "")

    def render(self, max_chars: int | None = None) -> str:
        """The chain for evaluators, merges and the finishing step: thoughts, actions and observations
        (``max_chars``: as in ``scratchpad``), then facts."""
        text = self.scratchpad(max_chars)
        if self.triples:
            text += "Triples:\n" + "\n".join(f"{h} -> {r} -> {t}" for h, r, t in self.triples) + "\n"
        if self.attributes:
            text += "Attributes:\n" + "\n".join(self.attributes) + "\n"
        if self.answer is not None:
            text += f"Final answer: {self.answer}\n"
        return text or "(no steps yet)\n"


def bracket_list(reply: str) -> list[str] | None:
    """The items of the last [a, b, c] in a reply; None when there is no bracketed list."""
    found = _BRACKETS.findall(reply)
    if not found:
        return None
    return [item.strip().strip("'\"") for item in found[-1].split(",") if item.strip().strip("'\"")]


def merge_steps(a: ChainState, b: ChainState) -> list[Step]:
    """Chain a's steps, then chain b's steps that a does not share (common ancestors appear once)."""
    return a.steps + [s for s in b.steps if not any(s is x for x in a.steps)]
