"""How the agent names the nodes of a corpus-built graph in what it reads and writes (ours, issue #48).

A corpus-built index names its nodes by hashes ("ent:a92e8d1fa11be5c7", "chunk:0004bb5b77ea60c3"): a
small model's tokenizer reads one in 14-20 tokens, the agent copies it into every action it writes,
and every list of neighbours repeats it. Two other namings, switches (``KGRConfig.node_names``):

- "short": each node the question's agent is shown is named by its kind and the order it was first
  shown ("E1", "E2" for entities, "P1" for passages);
- "names": an entity by its own name ("Leland, North Carolina"), a passage by its document's title
  ("chunk:Maximum Overdrive", "chunk:Maximum Overdrive #2" for a second passage of that document), so
  that a name says what it stands for and costs what the name does. A name that an action could not
  carry (brackets, over NAME_CHARS) falls back to the node's id; a name another node was given, or
  that is another node's id, gets " #2", " #3".

Actions take the name shown (in any case) or the full id; the trace keeps both (each step's "names").
An imported KG's own ids are shown as they are: they are the user's, and short already in the paper's
graphs."""

from __future__ import annotations

from typing import Literal

from thinkgraph.typedkg import TypedGraph

PASSAGE_TYPE = "passage"  # a corpus-built graph's passage nodes (methods/kgr/grounding.py)
PASSAGE_PREFIX, ENTITY_PREFIX = "P", "E"
PASSAGE_NAME = "chunk:"  # a passage's readable name: this, then its document's title
NAME_CHARS = 80  # the longest readable name; a longer one is the node's id
NodeNaming = Literal["ids", "short", "names"]


def document_title(features: dict[str, object]) -> str:
    """A corpus-built passage's document title: its "title" feature is "<title>: <start of its text>"
    (typedkg/importers.py ``load_from_index``), or the start of its text alone when it has none ("")."""
    label, text = str(features.get("title") or ""), str(features.get("text") or "")
    after = f": {text[:120]}"
    return label[: -len(after)].strip() if text and label.endswith(after) and len(label) > len(after) else ""


class NodeNames:
    """The names one question's agent sees: the graph's external ids (``mode="ids"``), short ones
    ("short") or readable ones ("names")."""

    def __init__(self, graph: TypedGraph, *, mode: NodeNaming = "ids") -> None:
        self.graph, self.mode = graph, mode
        self._by_node: dict[int, str] = {}
        self._by_name: dict[str, int] = {}  # casefolded name -> node
        self._counts = {PASSAGE_PREFIX: 0, ENTITY_PREFIX: 0}

    @property
    def renamed(self) -> bool:
        """Whether the agent sees names other than the graph's ids."""
        return self.mode != "ids"

    def name(self, node: int) -> str:
        """The node's name as the agent sees it (given the first time the node is shown)."""
        if self.mode == "ids":
            return self.graph.ext_id(node)
        known = self._by_node.get(node)
        if known is None:
            known = self._short(node) if self.mode == "short" else self._readable(node)
            self._by_node[node] = known
            if known != self.graph.ext_id(node):
                self._by_name[known.casefold()] = node
        return known

    def _short(self, node: int) -> str:
        """The next short name of the node's kind that is no node's own id (in either case), so that a
        graph whose ids look like short names ("E1") keeps its own."""
        prefix = PASSAGE_PREFIX if self.graph.node_type(node) == PASSAGE_TYPE else ENTITY_PREFIX
        while True:
            self._counts[prefix] += 1
            name = f"{prefix}{self._counts[prefix]}"
            if self._free(name):
                return name

    def _readable(self, node: int) -> str:
        """The node's own name, or a passage's document title; its id when neither can be an action's
        argument."""
        if self.graph.node_type(node) == PASSAGE_TYPE:
            title = document_title(self.graph.features(node))
            base = f"{PASSAGE_NAME}{' '.join(title.split())}" if title.strip() else ""
        else:
            base = " ".join(self.graph.text(node).split())
        if not base or len(base) > NAME_CHARS or any(c in base for c in "[]"):
            return self.graph.ext_id(node)
        name, n = base, 1
        while not self._free(name):
            n += 1
            name = f"{base} #{n}"
        return name

    def _free(self, name: str) -> bool:
        """Whether ``name`` is neither given to a node nor a node's own id (in either case)."""
        return (name.casefold() not in self._by_name and self.graph.lookup(name) is None
                and self.graph.lookup(name.lower()) is None)

    def resolve(self, ref: str) -> int:
        """The node a name the model wrote stands for: a name shown (any case), else an external id (or an
        integer id as text); unknown ones raise InputError (``TypedGraph.resolve``)."""
        key = ref.strip().strip("'\"")
        node = self._by_name.get(key.casefold())
        return self.graph.resolve(key) if node is None else node

    def ext_id(self, ref: str) -> str:
        """The external id of the node a shown name stands for; ``ref`` itself when it is none."""
        node = self._by_name.get(ref.strip().strip("'\"").casefold())
        return ref if node is None else self.graph.ext_id(node)

    def of_ext(self, ext_ids: list[str]) -> dict[str, str]:
        """Shown name -> external id, for those of ``ext_ids`` the agent was shown by a name of its own."""
        shown = {self.graph.ext_id(node): name for node, name in self._by_node.items()
                 if name != self.graph.ext_id(node)}
        return {shown[ext]: ext for ext in ext_ids if ext in shown}
