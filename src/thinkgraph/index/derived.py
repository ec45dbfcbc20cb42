"""Derived stages: vectors for every node, SYNONYM edges from entity vectors, hierarchical Leiden
communities with their summaries and vectors. Each stage brings itself up to date with what changed
since it last ran: vectors only for nodes without one, synonyms searched only for new entities (an
HNSW graph kept between runs, index/resolve.py), Leiden warm-started from the last partition and
only changed communities rewritten and summarised (index/communities.py). ``force`` (`thinkgraph
index --rebuild-derived`) rebuilds them all from the extracted graph.

Each stage records the graph version it was built for (index/stages.py), so a run killed between
"extraction done" and "derived stages done" is finished by the next `thinkgraph index`, and asking
refuses an index with a stage missing. Stages run in order; rebuilding one rebuilds those after it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from thinkgraph.config import IndexSettings
from thinkgraph.embed.base import Embedder
from thinkgraph.embed.hashing import HashingEmbedder
from thinkgraph.index.communities import build_communities
from thinkgraph.index.embedding_stage import EmbedWorker
from thinkgraph.index.report import IndexReport
from thinkgraph.index.resolve import update_synonyms
from thinkgraph.index.stages import (
    COMMUNITIES_META,
    DERIVED_STAGES,
    StageTimer,
    absorb_stale_flag,
    bump_graph_version,
    communities_wanted,
    graph_version,
    missing_stages,
    record_stage,
    writing,
)
from thinkgraph.llm.service import LLM
from thinkgraph.models import EdgeType, NodeType
from thinkgraph.store.base import GraphStore
from thinkgraph.store.claims import derived_turn

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int | None], None]  # (stage, done, total)


def _stages_to_build(store: GraphStore, settings: IndexSettings, force: bool) -> list[str]:
    missing = list(DERIVED_STAGES) if force else missing_stages(store)
    built = store.get_meta(COMMUNITIES_META)
    if built is not None and (built == "1") != communities_wanted(store, settings.communities):
        missing.append("communities")  # [index] communities changed since they were (not) built
    if not missing:
        return []
    first = min(DERIVED_STAGES.index(s) for s in missing)
    return list(DERIVED_STAGES[first:])


async def update_derived(store: GraphStore, embedder: Embedder, settings: IndexSettings, report: IndexReport,
                         *, llm: LLM | None = None, force: bool = False, progress: Progress | None = None,
                         worker: EmbedWorker | None = None, timer: StageTimer | None = None) -> None:
    """Build the derived stages that are missing or stale for the current graph version."""
    absorb_stale_flag(store)
    if not _stages_to_build(store, settings, force):
        return
    async with derived_turn(store, force=force) as turn:  # one process at a time builds them
        absorb_stale_flag(store)
        todo = _stages_to_build(store, settings, force)  # (another may have built them meanwhile)
        if todo:
            await _update(store, embedder, settings, report, llm, progress, worker, timer, todo, force)
        turn.built()


async def _update(store: GraphStore, embedder: Embedder, settings: IndexSettings, report: IndexReport,
                  llm: LLM | None, progress: Progress | None, worker: EmbedWorker | None, timer: StageTimer | None,
                  todo: list[str], force: bool) -> None:
    version = graph_version(store)
    if version is None:  # a forced rebuild of an index from before stage records
        with store.transaction():
            version = bump_graph_version(store)
    progress = progress or (lambda stage, done, total: None)
    timer = timer or StageTimer()
    if worker is None:  # called on its own (document removal): this process is the writer
        with writing(store):
            async with EmbedWorker(store, embedder, settings.embed_node_types) as own:
                await _build(store, embedder, settings, report, llm, progress, own, timer, todo, version, force)
        report.embedded += own.embedded
        return
    await _build(store, embedder, settings, report, llm, progress, worker, timer, todo, version, force)


async def _build(store: GraphStore, embedder: Embedder, settings: IndexSettings, report: IndexReport,
                 llm: LLM | None, progress: Progress, worker: EmbedWorker, timer: StageTimer,
                 todo: list[str], version: int, force: bool) -> None:
    with store.page_cache(derived_page_cache_kib(store.size_bytes(), settings.derived_page_cache_mb)):
        await _build_stages(store, embedder, settings, report, llm, progress, worker, timer, todo, version, force)


def derived_page_cache_kib(index_bytes: int, cap_mb: int) -> int:
    """An eighth of the index, at most ``cap_mb``: the same share of the index whatever its size, so an
    insert's page reads stay as few as the index grows (the store never lowers its writer's own cache)."""
    return min(index_bytes // 8 // 1024, cap_mb * 1024)


async def _build_stages(store: GraphStore, embedder: Embedder, settings: IndexSettings, report: IndexReport,
                        llm: LLM | None, progress: Progress, worker: EmbedWorker, timer: StageTimer,
                        todo: list[str], version: int, force: bool) -> None:
    report.rebuilt_stages = list(todo)
    types = [str(t) for t in settings.embed_node_types]

    async def embed_leftovers(node_types: list[str]) -> None:
        """Nodes without vectors that the worker never saw (e.g. left by a killed run), through the
        worker too: one encoder, one thread."""
        await worker.flush(entities_only=node_types == [NodeType.ENTITY])
        if node_types:  # counted in worker.embedded, which the caller adds to the report
            await worker.submit(await asyncio.to_thread(store.nodes_missing_vectors, node_types))
            await worker.flush(entities_only=node_types == [NodeType.ENTITY])

    if "vectors" in todo:  # entities first: synonyms and communities need only theirs
        with timer.stage("embed entities (missing vectors)"):
            await embed_leftovers([t for t in types if t == NodeType.ENTITY])
    if "synonyms" in todo:
        progress("synonyms", 0, None)
        with timer.stage("synonyms"):
            update = await asyncio.to_thread(update_synonyms, store, settings.synonym_threshold, rebuild=force,
                                             lexical=isinstance(embedder, HashingEmbedder))
        report.synonyms, report.synonyms_searched = update.edges, update.new_entities
        record_stage(store, "synonyms", version)
    if "communities" in todo and not communities_wanted(store, settings.communities):
        with timer.stage("communities (skipped)"):
            await asyncio.to_thread(_drop_communities, store)
        report.communities_skipped = True
    elif "communities" in todo:
        progress("communities", 0, None)
        communities = await build_communities(store, max_cluster_size=settings.max_cluster_size,
                                              seed=settings.leiden_seed,
                                              llm=llm if settings.summarize_communities else None,
                                              timer=timer, warm=not force)
        report.communities = communities.communities
        report.communities_written = communities.written
        report.summary_failures = communities.summary_failures
        report.community_levels = communities.levels
        store.set_meta(COMMUNITIES_META, "1")
    with timer.stage("embed (tail after the derived stages)"):
        await _embed_tail(store, worker, types, timer)
    for stage in ("vectors", "communities"):
        if stage in todo:
            record_stage(store, stage, version)
    log.info("derived stages %s built for graph version %d", ", ".join(todo), version)


async def _embed_tail(store: GraphStore, worker: EmbedWorker, types: list[str], timer: StageTimer) -> None:
    """What the worker still had (passages, documents, triplets), then every node still without a
    vector (communities without an LLM summary among them), timed in parts: how long each waited and
    how much of the worker's time went to encoding and to writing the vectors."""
    before = worker.effort()
    with timer.stage("embed tail: the worker's queue"):
        await worker.flush()
    with timer.stage("embed tail: finding nodes without vectors"):
        missing = await asyncio.to_thread(store.nodes_missing_vectors, types) if types else []
    with timer.stage("embed tail: nodes without vectors"):
        await worker.submit(missing)
        await worker.flush()
    spent = worker.effort() - before
    timer.add("embed tail: encoding", spent.encode_s)
    timer.add("embed tail: writing", spent.write_s)
    log.info("embedding tail: %d nodes (%d without vectors), %.1f s encoding, %.1f s writing",
             spent.embedded, len(missing), spent.encode_s, spent.write_s)


def _drop_communities(store: GraphStore) -> None:
    """The community layer of an earlier build goes when communities are not wanted any more."""
    with store.transaction():
        store.delete_nodes_of_type(NodeType.COMMUNITY)
        store.delete_edges_of_type(EdgeType.SUMMARY_FOR)
        store.delete_edges_of_type(EdgeType.CHILD_OF)
        store.set_meta(COMMUNITIES_META, "0")
