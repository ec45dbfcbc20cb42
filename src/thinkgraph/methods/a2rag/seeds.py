"""Seed extraction and alignment: query mentions (LLM, or the model-free extractor) matched to graph
entities by a hybrid of edit similarity and embedding cosine (S_V), and relation phrases matched to
the graph's predicates (S_R)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from pydantic import BaseModel, Field
from rapidfuzz import fuzz, process

from thinkgraph.errors import LLMUnavailableError, StructuredOutputError
from thinkgraph.ids import normalize_name
from thinkgraph.llm.service import LLM
from thinkgraph.methods.a2rag.config import A2RAGConfig
from thinkgraph.methods.a2rag.graph import STRUCTURAL_PREDICATES, EntityGraph
from thinkgraph.methods.a2rag.prompts import QUERY_SEEDS
from thinkgraph.names import entities_in, is_value
from thinkgraph.retrieval.linking import strip_mentions
from thinkgraph.retrieval.views import IndexView

SEED_STEP = "a2rag.seeds"


class QueryMentions(BaseModel):
    entities: list[str] = Field(default_factory=list)
    relations: list[str] = Field(default_factory=list)


@dataclass
class Seeds:
    mentions: list[str] = field(default_factory=list)
    relation_mentions: list[str] = field(default_factory=list)
    entities: dict[int, float] = field(default_factory=dict)  # entity row -> match confidence
    relations: set[str] = field(default_factory=set)
    source: str = "phrases"  # phrases | llm | model_free (the model's extraction was unusable)
    extraction_error: str | None = None  # why the model's extraction was unusable
    linked: list[str] = field(default_factory=list)  # names of the seeds linked in the question (shared)
    values: list[str] = field(default_factory=list)  # dates and numbers left out of S_V (``value_seeds``)


class SeedVocabulary:
    """What seed alignment compares a question with, derived once per graph (the view's graph once per
    index revision, ``AgenticRetriever.aligner``): normalised entity names, entity vectors, and the
    relation predicates with their vectors (the view's, embedded once per revision and kept in the view
    cache; a predicate it lacks is embedded on first use)."""

    def __init__(self, view: IndexView, graph: EntityGraph) -> None:
        self.view = view
        self.graph = graph
        self._extra_relation_vectors: dict[str, np.ndarray] = {}

    @cached_property
    def normalized_names(self) -> list[str]:
        return [normalize_name(n) for n in self.graph.names]

    @cached_property
    def entity_vectors(self) -> np.ndarray:
        vectors = self.view.vectors("entity")
        rows = [vectors.position.get(node_id) for node_id in self.graph.ids]
        out = np.zeros((len(rows), vectors.vectors.shape[1] if len(vectors) else 1), dtype=np.float32)
        for i, r in enumerate(rows):
            if r is not None:
                out[i] = vectors.vectors[r]
        return out

    @cached_property
    def predicates(self) -> list[str]:
        """The relations facts state (co-occurrence and synonym links are structure: no seed matches them)."""
        return sorted({f.predicate for f in self.graph.facts} - STRUCTURAL_PREDICATES)

    @cached_property
    def _relation_rows(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.view.relation_vectors[0])}

    def relation_vectors(self, names: list[str]) -> np.ndarray:
        """The vectors of ``names`` (predicates of the graph), from the view's relation vectors."""
        matrix = self.view.relation_vectors[1]
        missing = [n for n in names if n not in self._relation_rows and n not in self._extra_relation_vectors]
        if missing:  # (a graph given apart from the view's)
            self._extra_relation_vectors.update(zip(missing, self.view.embedder.embed(missing), strict=True))
        return np.stack([matrix[self._relation_rows[n]] if n in self._relation_rows
                         else self._extra_relation_vectors[n] for n in names])


class SeedAligner:
    def __init__(self, view: IndexView, vocabulary: SeedVocabulary, config: A2RAGConfig, llm: LLM | None) -> None:
        self.view = view
        self.vocabulary = vocabulary
        self.graph = vocabulary.graph
        self.config = config
        self.llm = llm

    def phrases(self, question: str) -> QueryMentions:
        """The model-free mentions (§III-C's phrase extractor): name-like phrases, and as the relation
        phrase what the question says besides them."""
        names = entities_in(question)
        relation = strip_mentions(question, names).strip(" ?.!")
        return QueryMentions(entities=names or [question], relations=[relation] if relation and names else [])

    async def mentions(self, question: str) -> tuple[QueryMentions, str | None, str]:
        """The question's entity and relation mentions, why the model's extraction could not be used
        (None when it was, or when none was asked for), and where the mentions came from."""
        if self.llm is None or self.config.seed_source == "phrases":
            return self.phrases(question), None, "phrases"
        try:
            return await self.llm.json([{"role": "user", "content": QUERY_SEEDS.format(question=question)}],
                                       QueryMentions, step=SEED_STEP, kind="query"), None, "llm"
        except StructuredOutputError as exc:  # counted by the LLM layer too; the phrases stand in
            return self.phrases(question), str(exc), "model_free"
        except LLMUnavailableError:
            raise

    async def seeds(self, question: str) -> Seeds:
        found, failure, source = await self.mentions(question)
        seeds = Seeds(mentions=found.entities, relation_mentions=found.relations, source=source,
                      extraction_error=failure)
        if self.config.retrieval == "shared":
            for link in self.view.entity_linker.link(question):
                if (row := self.graph.index.get(link.entity_id)) is not None:
                    seeds.entities[row] = max(seeds.entities.get(row, 0.0), link.confidence)
            seeds.linked = [self.graph.names[r] for r in seeds.entities]
        if not seeds.entities:  # (shared: no entity of the index is named; the hybrid matcher tries)
            for mention in found.entities:
                for row, score in self.align_entity(mention):
                    seeds.entities[row] = max(seeds.entities.get(row, 0.0), score)
        if not self.config.value_seeds:
            self._leave_out_values(seeds)
        best = sorted(seeds.entities.items(), key=lambda kv: -kv[1])[: self.config.max_seeds]
        seeds.entities = dict(best)
        if self.config.relation_seeds:
            for phrase in found.relations:
                seeds.relations.update(self.align_relation(phrase))
        return seeds

    def _leave_out_values(self, seeds: Seeds) -> None:
        """Drop the dates and numbers from the entity seeds while a named entity remains."""
        values = [row for row in seeds.entities if is_value(self.graph.names[row])]  # (in the seeds' order)
        if values and len(values) < len(seeds.entities):
            seeds.values = [self.graph.names[row] for row in values]
            seeds.entities = {row: w for row, w in seeds.entities.items() if row not in values}

    def align_entity(self, mention: str) -> list[tuple[int, float]]:
        """Entities whose hybrid score w*edit + (1-w)*cosine passes the threshold."""
        if not self.graph.ids:
            return []
        c = self.config
        target = normalize_name(mention)
        names = self.vocabulary.normalized_names
        cosine = self.vocabulary.entity_vectors @ self.view.embed_query(mention)
        candidates = set(np.argsort(-cosine)[: c.seed_candidates].tolist())
        for _, _, row in process.extract(target, names, scorer=fuzz.ratio, limit=c.seed_candidates):
            candidates.add(int(row))
        scored = []
        for row in candidates:
            lexical = fuzz.ratio(target, names[row]) / 100.0
            score = c.seed_lexical_weight * lexical + (1 - c.seed_lexical_weight) * float(max(cosine[row], 0.0))
            if score >= c.seed_threshold:
                scored.append((row, score))
        return sorted(scored, key=lambda t: -t[1])

    def align_relation(self, phrase: str) -> set[str]:
        """Predicates lexically close to the phrase (token-set similarity), then confirmed by cosine."""
        hits = process.extract(phrase.casefold(), self.vocabulary.predicates, scorer=fuzz.token_set_ratio, limit=20)
        names = [h[0] for h in hits]
        if not names:
            return set()
        cosine = self.vocabulary.relation_vectors(names) @ self.view.embed_query(phrase)
        w = self.config.seed_lexical_weight
        return {name for (name, lex, _), cos in zip(hits, cosine, strict=True)
                if w * lex / 100.0 + (1 - w) * float(cos) >= self.config.relation_threshold}
