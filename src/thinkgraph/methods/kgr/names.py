"""Short names for the nodes of a corpus-built graph in what the agent reads and writes (ours, issue #48).

A corpus-built index names its nodes by hashes ("ent:a92e8d1fa11be5c7", "chunk:0004bb5b77ea60c3"): a
small model's tokenizer reads one in 14-20 tokens, the agent copies it into every action it writes,
and every list of neighbours repeats it. Within one question each node the agent is shown is named
instead by its kind and the order it was first shown ("E1", "E2" for entities, "P1" for passages).
Actions take the short name or the full id; the trace keeps both (each step's "names"). A switch
(``KGRConfig.node_names = "short"``), not the default: it made a question a quarter cheaper and its
answers worse (config.py has the measurement). An imported KG's own ids are shown as they are: they are
the user's, and short already in the paper's graphs."""

from __future__ import annotations

from thinkgraph.typedkg import TypedGraph

PASSAGE_TYPE = "passage"  # a corpus-built graph's passage nodes (methods/kgr/grounding.py)
PASSAGE_PREFIX, ENTITY_PREFIX = "P", "E"


class NodeNames:
    """The names one question's agent sees: short ones (``short``) or the graph's external ids."""

    def __init__(self, graph: TypedGraph, *, short: bool) -> None:
        self.graph, self.short = graph, short
        self._by_node: dict[int, str] = {}
        self._by_name: dict[str, int] = {}
        self._counts = {PASSAGE_PREFIX: 0, ENTITY_PREFIX: 0}

    def name(self, node: int) -> str:
        """The node's name as the agent sees it (a short one is given the first time the node is shown)."""
        if not self.short:
            return self.graph.ext_id(node)
        known = self._by_node.get(node)
        if known is None:
            prefix = PASSAGE_PREFIX if self.graph.node_type(node) == PASSAGE_TYPE else ENTITY_PREFIX
            known = self._next(prefix)
            self._by_node[node], self._by_name[known] = known, node
        return known

    def _next(self, prefix: str) -> str:
        """The next short name of a kind that is no node's own id (in either case), so that a graph whose
        ids look like short names ("E1") keeps its own."""
        while True:
            self._counts[prefix] += 1
            name = f"{prefix}{self._counts[prefix]}"
            if self.graph.lookup(name) is None and self.graph.lookup(name.lower()) is None:
                return name

    def resolve(self, ref: str) -> int:
        """The node a name the model wrote stands for: a short name shown ("E2", "e2"), else an external id
        (or an integer id as text); unknown ones raise InputError (``TypedGraph.resolve``)."""
        key = ref.strip().strip("'\"")
        node = self._by_name.get(key.upper())
        return self.graph.resolve(key) if node is None else node

    def ext_id(self, ref: str) -> str:
        """The external id of the node a short name stands for; ``ref`` itself when it is none."""
        node = self._by_name.get(ref.strip().upper())
        return ref if node is None else self.graph.ext_id(node)

    def of_ext(self, ext_ids: list[str]) -> dict[str, str]:
        """Short name -> external id, for those of ``ext_ids`` the agent was shown by a short name."""
        shown = {self.graph.ext_id(node): name for node, name in self._by_node.items()}
        return {shown[ext]: ext for ext in ext_ids if ext in shown}
