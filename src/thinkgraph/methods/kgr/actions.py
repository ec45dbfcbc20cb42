"""The agent's graph actions (Graph-CoT): parsing a model's step into a thought and actions, and
running actions on a typed graph. Bad actions become observations that tell the model what went
wrong, so that it can correct itself; they never raise."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field

from thinkgraph.errors import InputError, ThinkgraphError
from thinkgraph.methods.kgr.names import PASSAGE_TYPE, NodeNames
from thinkgraph.methods.replies import answer_part, without_markers
from thinkgraph.typedkg import TypedGraph
from thinkgraph.typedkg.describe import listed

# EdgeTypes is ours (not Graph-CoT's): prompts offer it only when the graph definition could not list
# every edge type (KGRConfig.graph_chars), as on a corpus-built index with one per OpenIE predicate.
ACTION_NAMES = ("RetrieveNode", "NodeFeature", "NeighborCheck", "NodeDegree", "Finish", "EdgeTypes")
_ALIASES = {"neighbourcheck": "NeighborCheck", "neighborcheck": "NeighborCheck", "retrievenode": "RetrieveNode",
            "nodefeature": "NodeFeature", "nodedegree": "NodeDegree", "finish": "Finish", "edgetypes": "EdgeTypes"}
_ONE_ARGUMENT = ("RetrieveNode", "Finish", "EdgeTypes")
# an action's argument in brackets, holding at most one level of brackets itself: Finish[1867 [2]] (a
# citation marker copied into the answer); explore mode reads its Finish with it too
BRACKETED_ARGUMENT = r"\[((?:[^\[\]]|\[[^\[\]]*\])*)\]"
_ACTION = re.compile(r"\b(RetrieveNode|NodeFeature|Neighbou?rCheck|NodeDegree|Finish|EdgeTypes)\s*"
                     + BRACKETED_ARGUMENT, re.IGNORECASE | re.DOTALL)
_N = r"\s*(?:\d+|<\s*n\s*>)?\s*"  # a step's number, or the "<n>" of the format line copied as it is
_THOUGHT = re.compile(rf"^\s*(?:Thought{_N}:)?\s*(.*?)\s*(?:Action{_N}:|$)", re.IGNORECASE | re.DOTALL)
PASSAGE_CHARS = 400  # a passage's text shown in a list of neighbours (a corpus-built graph's label has 120)
INVALID = ("Invalid action. Use RetrieveNode[text], NodeFeature[node id, feature], NeighborCheck[node id, edge type], "
           "NodeDegree[node id, edge type] or Finish[answer].")


@dataclass(frozen=True, slots=True)
class Action:
    name: str
    args: tuple[str, ...]

    def render(self) -> str:
        return f"{self.name}[{', '.join(self.args)}]"


@dataclass
class Observation:
    text: str
    nodes: list[str] = field(default_factory=list)  # external ids the observation is grounded in
    answer: str | None = None  # set by Finish
    invalid: bool = False


# Where a ReAct step ends: the model must not write the observation itself (the graph does).
REACT_STOP = ("\nObservation", "Observation:")


_ACTION_CLAUSE = re.compile(rf"Action{_N}:(.*?)(?=Thought{_N}:|Action\s*\d+\s*:|$)", re.IGNORECASE | re.DOTALL)


def parse_step(reply: str) -> tuple[str, list[Action]]:
    """The thought and the actions of one model step ("Thought: ... Action: X[...], Y[...]").

    One step may issue several actions (Graph-CoT's App. G: "Action 3: NodeFeature[...],
    NodeFeature[...]"). Only the first action clause counts: a model that runs on writes invented
    observations and further steps (a Finish among them) that the graph never answered, so
    everything after the step's own actions is ignored."""
    reply = re.split(rf"\n?\s*Observation{_N}:", reply, maxsplit=1)[0]
    match = _THOUGHT.match(reply)
    thought = match.group(1).strip() if match else reply.strip()
    clause = _ACTION_CLAUSE.search(reply)
    tail = clause.group(1) if clause else reply
    found = list(_ACTION.finditer(tail)) if clause else list(_ACTION.finditer(tail))[:1]
    return thought, [Action(_ALIASES[m.group(1).lower()], _split_args(m.group(1), m.group(2))) for m in found]


def _split_args(name: str, raw: str) -> tuple[str, ...]:
    if _ALIASES[name.lower()] in _ONE_ARGUMENT:
        return (raw.strip(),)
    return tuple(part.strip().strip("'\"") for part in raw.rsplit(",", 1)) if "," in raw else (raw.strip(),)


_PLACEHOLDERS = {"answer", "the answer", "final answer", "the final answer", "your answer", "the answer itself", "..."}


def _loose(name: str) -> str:
    return " ".join(name.replace("_", " ").replace("-", " ").split()).casefold()


def is_placeholder(answer: str) -> bool:
    """Whether a Finish argument is the format's placeholder ("answer", "<the answer>"), not an answer."""
    return " ".join(answer.strip().strip("<>").split()).casefold().strip(" .") in _PLACEHOLDERS


class GraphEnvironment:
    def __init__(self, graph: TypedGraph, *, retrieve_k: int = 1, max_neighbors: int = 50,
                 max_chars: int = 4000, node_edge_types: int = 0, passage_chars: int = PASSAGE_CHARS,
                 short_names: bool = False) -> None:
        """``short_names``: nodes are shown as "E1", "P2" (methods/kgr/names.py), not by their ids.
        ``node_edge_types``: how many of a retrieved node's edge types (most neighbours first) its
        RetrieveNode observation lists (ours; 0, Graph-CoT's observation, the node alone). The agent
        sets it where the graph definition cannot list every edge type, so that the model sees what it
        can follow from the node it found. ``passage_chars``: characters of a passage's text in a list
        of neighbours (ours; 0: the node's label as it is)."""
        self.graph = graph
        self.retrieve_k = retrieve_k
        self.max_neighbors = max_neighbors
        self.max_chars = max_chars
        self.node_edge_types = node_edge_types
        self.passage_chars = passage_chars
        self.names = NodeNames(graph, short=short_names)

    def run(self, actions: list[Action]) -> Observation:
        if not actions:
            return Observation(INVALID, invalid=True)
        parts = [self.run_one(a) for a in actions]
        answer = next((p.answer for p in parts if p.answer is not None), None)
        text = " ".join(p.text for p in parts)
        if len(text) > self.max_chars:
            text = text[: self.max_chars] + " ... (cut)"
        return Observation(text, [n for p in parts for n in p.nodes], answer, all(p.invalid for p in parts))

    def run_one(self, action: Action) -> Observation:
        try:
            observed: Observation = getattr(self, f"_{action.name}")(*action.args)
            return observed
        except TypeError:
            wanted = "one argument" if action.name in _ONE_ARGUMENT else "two arguments"
            return Observation(f"{action.name} takes {wanted}; got {action.render()}.", invalid=True)
        except InputError as exc:
            return Observation(f"{exc}.", invalid=True)

    def _RetrieveNode(self, text: str) -> Observation:  # noqa: N802
        if not text:
            return Observation("RetrieveNode needs a text to search for.", invalid=True)
        try:
            hits = self.graph.search(text, self.retrieve_k)
        except ThinkgraphError as exc:
            return Observation(f"Node search is unavailable: {exc}.", invalid=True)
        if not hits:
            return Observation("No node was found.")
        listed = "; ".join(f"{self.names.name(h.node)} ({self.graph.node_type(h.node)}: {h.text})"
                           f"{self._edge_types_note(h.node)}"
                           for h in hits)
        return Observation(f"The most related node{'s are' if len(hits) > 1 else ' is'} {listed}.",
                           [h.ext_id for h in hits])

    def _NodeFeature(self, node_ref: str, feature: str) -> Observation:  # noqa: N802
        node = self.names.resolve(node_ref)
        features = self.graph.features(node)
        if feature not in features:
            return Observation(f"Node {node_ref} has no feature {feature!r}; its features are: "
                               f"{', '.join(features) or '(none)'}.", invalid=True)
        return Observation(f"The {feature} of {node_ref} is: {features[feature]}.", [self.graph.ext_id(node)])

    def _NeighborCheck(self, node_ref: str, edge_type: str) -> Observation:  # noqa: N802
        node = self.names.resolve(node_ref)
        edge_type = self._edge_type(node, edge_type)
        neighbors = self.graph.neighbors(node, edge_type)
        shown = [self._label(int(n)) for n in neighbors[: self.max_neighbors]]
        more = f" (and {len(neighbors) - len(shown)} more)" if len(neighbors) > len(shown) else ""
        grounded = [self.graph.ext_id(node)] + [self.graph.ext_id(int(n)) for n in neighbors[: self.max_neighbors]]
        return Observation(f"The {edge_type} neighbours of {node_ref} are: [{', '.join(shown)}]{more}.", grounded)

    def _NodeDegree(self, node_ref: str, edge_type: str) -> Observation:  # noqa: N802
        node = self.names.resolve(node_ref)
        edge_type = self._edge_type(node, edge_type)
        return Observation(f"Node {node_ref} has {self.graph.degree(node, edge_type)} {edge_type} neighbours.",
                           [self.graph.ext_id(node)])

    def _EdgeTypes(self, node_ref: str) -> Observation:  # noqa: N802
        node = self.names.resolve(node_ref)
        degrees = self.graph.edge_type_degrees(node)
        shown = [f"{name} ({count})" for name, count in degrees[: self.max_neighbors]]
        more = f" (and {len(degrees) - len(shown)} more)" if len(degrees) > len(shown) else ""
        return Observation(f"The edge types of {self.names.name(node)}, with its neighbours along each, are: "
                           f"[{', '.join(shown)}]{more}.", [self.graph.ext_id(node)])

    def _Finish(self, answer: str) -> Observation:  # noqa: N802
        if not answer.strip():
            return Observation("Finish needs the answer inside the brackets: Finish[answer].", invalid=True)
        if is_placeholder(answer):
            return Observation(f"Finish[{answer}] repeats the format; write the answer itself inside the brackets.",
                               invalid=True)
        return Observation(f"Finished: {answer}", answer=answer.strip())

    def answer_text(self, answer: str | None, seen: Collection[str] = ()) -> str | None:
        """A Finish[answer] as the answer it states, read like every method's answer (methods/replies.py:
        "The answer is" and [n] markers taken off); the id of a node the chain has ``seen``, given for
        an answer, becomes the node's name (a number stays a number). None stays None."""
        if answer is None:
            return None
        ext = self.names.ext_id(answer.strip())
        node = self.graph.lookup(ext) if ext in seen else None
        if node is not None:
            return self.graph.text(node)
        line, _ = answer_part(answer)
        text = without_markers(line).strip()
        if text.endswith(".") and text.count(".") == 1:  # a sentence's full stop, not "U.S." or "Jr."
            text = text[:-1].rstrip()
        return text or None

    def _edge_type(self, node: int, name: str) -> str:
        """The edge type a model named, as the graph spells it: the name itself, else the node's own edge
        type that it names up to case, underscores and spaces ("located_in" for "located in"). An
        unknown one is an error that lists the node's edge types (the graph's may be thousands)."""
        name = name.strip().strip("'\"")
        if self.graph.has_edge_type(name):
            return name
        own = self.graph.edge_types_of(node)
        match = next((t for t in own if _loose(t) == _loose(name)), None)
        if match is None:
            raise InputError(f"unknown edge type {name!r}; the edge types of {self.names.name(node)} are: "
                             f"{listed(own)}")
        return match

    def _edge_types_note(self, node: int) -> str:
        if not self.node_edge_types:
            return ""
        degrees = self.graph.edge_type_degrees(node)
        shown = [f"{name} ({count})" for name, count in degrees[: self.node_edge_types]]
        more = f" (and {len(degrees) - len(shown)} more)" if len(degrees) > len(shown) else ""
        return f", with edge types [{', '.join(shown)}]{more}" if shown else ", with no edges"

    def _label(self, node: int) -> str:
        ext, text = self.graph.ext_id(node), self.graph.text(node)
        if self.passage_chars and self.graph.node_type(node) == PASSAGE_TYPE:
            text = self._passage_head(node, text)
        name = self.names.name(node)
        return name if text == ext else f"{name} ({text})"

    def _passage_head(self, node: int, label: str) -> str:
        """A passage's label with the first ``passage_chars`` of its text: a corpus-built graph labels a
        passage with its title and 120 characters, which end before most facts."""
        body = str(self.graph.features(node).get("text") or "")
        start = label.find(body[:40]) if body else -1
        if start < 0 or len(body) <= len(label) - start:
            return label
        cut = body[: self.passage_chars]
        return label[:start] + cut + ("..." if len(body) > len(cut) else "")
