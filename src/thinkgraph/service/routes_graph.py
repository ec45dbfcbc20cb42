"""Graph browsing (node, neighbours, search, communities) and curation (entity edit and merge with
re-embedding, and the audit log)."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from fastapi import APIRouter, Query, Request

from thinkgraph.api import ThinkGraph
from thinkgraph.errors import InputError
from thinkgraph.models import NodeType
from thinkgraph.service.routes_api import workspaces
from thinkgraph.service.schemas import EntityEdit, EntityMerge

router = APIRouter(prefix="/v1/workspaces/{ws}")
MAX_NEIGHBORS = 200


def _node(tg: ThinkGraph, node_id: str) -> dict[str, Any]:
    node = tg.store.get_node(node_id)
    if node is None:
        raise InputError(f"no node {node_id!r}")
    return {**dataclasses.asdict(node), "provenance": [dataclasses.asdict(p) for p in tg.store.provenance(node_id)]}


@router.get("/nodes/{node_id:path}/neighbors")
async def neighbors(request: Request, ws: str, node_id: str, edge_type: str | None = None,
                    limit: int = Query(50, ge=1, le=MAX_NEIGHBORS)) -> dict[str, Any]:
    tg = workspaces(request).get(ws)
    _node(tg, node_id)
    edges = tg.store.edges_of(node_id, edge_type)[:limit]
    others = {n.id: n for n in tg.store.get_nodes([e.dst if e.src == node_id else e.src for e in edges])}
    return {"node": node_id, "edges": [dataclasses.asdict(e) for e in edges],
            "nodes": [dataclasses.asdict(n) for n in others.values()]}


@router.get("/nodes/{node_id:path}")
async def node(request: Request, ws: str, node_id: str) -> dict[str, Any]:
    return _node(workspaces(request).get(ws), node_id)


@router.get("/search")
async def search(request: Request, ws: str, q: str = Query(min_length=1), type: str = "entity",  # noqa: A002
                 k: int = Query(10, ge=1, le=100)) -> list[dict[str, Any]]:
    tg = workspaces(request).get(ws)
    tg.refresh()
    if type not in {t.value for t in NodeType}:
        raise InputError(f"unknown node type {type!r}; valid: {', '.join(t.value for t in NodeType)}")
    hits = tg.view.vectors(type).search(tg.view.embed_query(q), k)
    nodes = {n.id: n for n in tg.store.get_nodes([nid for nid, _ in hits])}
    return [{**dataclasses.asdict(nodes[nid]), "score": score} for nid, score in hits if nid in nodes]


@router.get("/communities")
async def communities(request: Request, ws: str, level: int | None = None,
                      limit: int = Query(100, ge=1, le=1000)) -> list[dict[str, Any]]:
    tg = workspaces(request).get(ws)
    out = []
    for community in tg.store.iter_nodes(NodeType.COMMUNITY):
        if level is None or community.props.get("level") == level:
            out.append(dataclasses.asdict(community))
        if len(out) >= limit:
            break
    return out


async def _curate(request: Request, ws: str, change: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
    spaces = workspaces(request)
    reader = spaces.get(ws)
    async with spaces.lock(ws):
        def run() -> Any:
            with ThinkGraph(reader.store.location, settings=reader.settings, embedder=reader.embedder) as writer:
                return getattr(writer, change)(*args, **kwargs)

        node = await asyncio.to_thread(run)
    reader.refresh()
    return dataclasses.asdict(node)


@router.patch("/entities/{node_id:path}")
async def edit_entity(request: Request, ws: str, node_id: str, body: EntityEdit) -> dict[str, Any]:
    return await _curate(request, ws, "edit_entity", node_id, name=body.name, description=body.description)


@router.post("/entities/merge")
async def merge_entities(request: Request, ws: str, body: EntityMerge) -> dict[str, Any]:
    return await _curate(request, ws, "merge_entities", body.sources, body.target)


@router.get("/audit")
async def audit(request: Request, ws: str, limit: int = Query(100, ge=1, le=1000)) -> list[dict[str, Any]]:
    return workspaces(request).get(ws).store.list_audit(limit)
