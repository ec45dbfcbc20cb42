"""Automatic graph exploration (§4.2.2, App. B Fig. 10, Alg. 1): a thought; entities extracted from
it (or from the question) and linked to nodes; then a breadth-first search to ``search_depth`` in
which the model prunes each entity's relations, then the neighbours along each kept relation, and
names the relevant attributes; found triples condition the next thought. An End? check after each
depth stops the search once the facts suffice."""

from __future__ import annotations

import re
from itertools import count

from thinkgraph.config import CallKind
from thinkgraph.llm.service import LLM
from thinkgraph.methods.kgr.actions import BRACKETED_ARGUMENT, is_placeholder
from thinkgraph.methods.kgr.config import KGRConfig
from thinkgraph.methods.kgr.examples import examples
from thinkgraph.methods.kgr.finish import Finisher
from thinkgraph.methods.kgr.prompts import (
    END_CHECK,
    ENTITY_EXTRACTION,
    EXPLORE_THOUGHT,
    EXPLORE_TYPES_NOTE,
    MERGE,
    MERGE_EXPLORE_FORMAT,
    PRUNE_ENTITIES,
    PRUNE_RELATIONS,
    SEARCH_ATTRIBUTES,
)
from thinkgraph.methods.kgr.state import ChainState, Step, bracket_list, merge_steps
from thinkgraph.methods.kgr.trace import Recorder
from thinkgraph.retrieval.linking import EntityLinker
from thinkgraph.typedkg import TypedGraph

_FINISH = re.compile(r"Finish\s*" + BRACKETED_ARGUMENT, re.IGNORECASE)  # read as the agent reads it
_YES = re.compile(r"^\W*yes\b", re.IGNORECASE)


def finish_answer(thought: str) -> str | None:
    """The answer of a thought's last Finish[...] that names one: a thought that quotes the format's
    placeholder ("I will write Finish[answer] when done") has not finished, and a greedy reading from its
    first bracket to its last took the rest of the thought as the answer (Qwen2.5-1.5B on HotpotQA)."""
    named = [m.group(1).strip() for m in _FINISH.finditer(thought) if not is_placeholder(m.group(1))]
    return next((a for a in reversed(named) if a), None)


class ExploreStepper:
    def __init__(self, llm: LLM, graph: TypedGraph, config: KGRConfig, question: str, recorder: Recorder,
                 ids: count[int], linker: EntityLinker | None = None, finisher: Finisher | None = None) -> None:
        """``linker``: the index's entity names (retrieval/linking.py), tried before the nearest node
        text; None links by vector search alone (an imported typed graph has its own node ids).
        ``finisher``: the finishing step at the step limit (KGRConfig.finish_at_limit)."""
        self.llm, self.graph, self.config, self.question = llm, graph, config, question
        self.recorder, self.ids, self.linker, self.finisher = recorder, ids, linker, finisher
        described = graph.description(config.definition_chars(llm.settings.context_window))
        self.graph_definition = described.text + ("" if described.complete else f"\n{EXPLORE_TYPES_NOTE}")

    def _examples(self, prompt: str) -> str:
        return examples(prompt, self.config.few_shot)

    async def _ask(self, prompt: str, step: str, kind: CallKind) -> str:
        return await self.llm.text([{"role": "user", "content": prompt}], step=step, kind=kind)

    async def finish(self, state: ChainState, variant: str) -> ChainState:
        if self.finisher is None:
            return await self.step(state, variant)
        return await self.finisher.finish(state)

    async def step(self, state: ChainState, variant: str, *, repair: bool = True) -> ChainState:
        """One thought and its exploration (``repair``: unused, a thought is free text)."""
        prompt = EXPLORE_THOUGHT.format(
            graph=self.graph_definition, question=self.question, variant=variant,
            triples="\n".join(f"{h} -> {r} -> {t}" for h, r, t in state.triples) or "(none)",
            attributes="\n".join(state.attributes) or "(none)",
            thoughts="\n".join(s.thought for s in state.steps) or "(none)", examples=self._examples("thought"))
        thought = (await self._ask(prompt, "kgr.thought", "action")).strip()
        return await self._advance(state, thought, merged=False, parents=(state.id,))

    async def merge(self, a: ChainState, b: ChainState, variant: str) -> ChainState:
        prompt = MERGE.format(format=MERGE_EXPLORE_FORMAT, question=self.question, chain_1=a.render(),
                              chain_2=b.render(), variant=variant, examples=self._examples("merge_explore"))
        thought = (await self._ask(prompt, "kgr.merge", "action")).strip()
        base = ChainState(-1, merge_steps(a, b), depth=max(a.depth, b.depth) - 1, seen={**a.seen, **b.seen})
        return await self._advance(base, thought, merged=True, parents=(a.id, b.id))

    async def _advance(self, state: ChainState, thought: str, *, merged: bool,
                       parents: tuple[int, ...]) -> ChainState:
        if (answer := finish_answer(thought)) is not None:
            child = state.child(self.ids, Step(thought, merged=merged), answer)
        else:
            text = thought if state.steps else f"{self.question}\n{thought}"
            seen = dict(state.seen)
            linked = await self._link(text, seen)
            triples, attributes = await self.graph_explore(state, seen)
            step = Step(thought, observation=f"{len(triples)} triples, {len(attributes)} attributes",
                        nodes=linked + [n for n in seen if seen[n] and n not in state.seen], triples=triples,
                        attributes=attributes, merged=merged)
            child = state.child(self.ids, step, seen=seen)
        child.parents = parents
        self.recorder.state(child)
        return child

    async def _link(self, text: str, seen: dict[str, bool]) -> list[str]:
        """Entities named in the text, each linked to its best-matching node (new ones unvisited)."""
        prompt = ENTITY_EXTRACTION.format(text=text, examples=self._examples("entities"))
        reply = await self._ask(prompt, "kgr.entities", "query")
        names = bracket_list(reply)
        if names is None:
            self.recorder.parse_failures += 1
            names = []
        linked: list[str] = []
        how: list[str] = []
        for name in names:
            node, by = self._node_named(name)
            if node is not None:
                linked.append(node)
                how.append(by)
                seen.setdefault(node, False)
        self.recorder.note("link", {"entities": names}, {"nodes": linked, "by": how})
        return linked

    def _node_named(self, name: str) -> tuple[str | None, str]:
        """The node an extracted name stands for: an entity of the index with that name (exact, or
        fuzzy for a spelling variant), else the node whose text is nearest."""
        if self.linker is not None:
            for link in sorted(self.linker.link(name), key=lambda lk: -lk.confidence):
                if self.graph.lookup(link.entity_id) is not None:
                    return link.entity_id, "name"
        hits = self.graph.search(name, 1)
        return (hits[0].ext_id, "vector") if hits else (None, "")

    async def graph_explore(self, state: ChainState, seen: dict[str, bool]) -> tuple[list[tuple[str, str, str]],
                                                                                  list[str]]:
        """Alg. 1: BFS over unvisited entities to ``search_depth``, pruning relations then neighbours."""
        triples: list[tuple[str, str, str]] = []
        attributes: list[str] = []
        for depth in range(self.config.search_depth):
            frontier = [ext for ext, visited in seen.items() if not visited]
            reached: list[str] = []
            for ext in frontier:
                seen[ext] = True
                node = self.graph.resolve(ext)
                attributes += await self._attributes(node)
                for relation, tails in await self._pruned_neighbors(node):
                    head = self.graph.text(node)
                    triples += [(head, relation, self.graph.text(t)) for t in tails]
                    reached += [self.graph.ext_id(t) for t in tails]
            for ext in reached:
                seen.setdefault(ext, False)
            if not frontier or await self._enough(state, triples, attributes):
                break
            self.recorder.note("explore.depth", {"depth": depth + 1}, {"triples": len(triples)})
        return triples, attributes

    async def _pruned_neighbors(self, node: int) -> list[tuple[str, list[int]]]:
        relations = self.graph.edge_types_of(node)
        if not relations:
            return []
        entity = self.graph.text(node)
        reply = await self._ask(PRUNE_RELATIONS.format(question=self.question, entity=entity,
                                                       relations=", ".join(relations),
                                                       examples=self._examples("relations")), "kgr.prune_relations",
                                "verdict")
        kept = [r for r in (bracket_list(reply) or []) if r in relations]
        out = []
        for relation in kept:
            neighbors = [int(n) for n in self.graph.neighbors(node, relation)[: self.config.max_neighbors]]
            names = {self.graph.text(n): n for n in neighbors}
            reply = await self._ask(PRUNE_ENTITIES.format(question=self.question, entity=entity, relation=relation,
                                                          neighbors=", ".join(names),
                                                          examples=self._examples("neighbours")),
                                    "kgr.prune_entities",
                                    "verdict")
            chosen = [names[x] for x in (bracket_list(reply) or []) if x in names]
            out.append((relation, chosen))
        self.recorder.note("prune", {"entity": entity, "relations": relations},
                           {"kept": {r: [self.graph.ext_id(n) for n in ns] for r, ns in out}})
        return out

    async def _attributes(self, node: int) -> list[str]:
        features = {k: v for k, v in self.graph.features(node).items() if v not in (None, "", [])}
        if not features:
            return []
        reply = await self._ask(SEARCH_ATTRIBUTES.format(question=self.question, entity=self.graph.text(node),
                                                         attributes=", ".join(features),
                                                         examples=self._examples("attributes")), "kgr.attributes",
                                "verdict")
        chosen = [k for k in (bracket_list(reply) or []) if k in features]
        return [f"{self.graph.text(node)}: {k} = {str(features[k])[:500]}" for k in chosen]

    async def _enough(self, state: ChainState, triples: list[tuple[str, str, str]], attributes: list[str]) -> bool:
        prompt = END_CHECK.format(question=self.question, thoughts=" ".join(s.thought for s in state.steps) or "(none)",
                                  triples="\n".join(f"{h} -> {r} -> {t}" for h, r, t in state.triples + triples)
                                  or "(none)", attributes="\n".join(state.attributes + attributes) or "(none)",
                                  examples=self._examples("end_check"))
        return bool(_YES.match((await self._ask(prompt, "kgr.end_check", "verdict")).lstrip("[")))
