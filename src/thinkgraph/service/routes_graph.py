"""Graph browsing (node, neighbours, search, communities) and curation (entity edit and merge with
re-embedding, and the audit log)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request

from thinkgraph.api import ThinkGraph
from thinkgraph.errors import InputError, NotFoundError
from thinkgraph.models import Node, NodeType
from thinkgraph.service.routes_api import jobs, workspaces
from thinkgraph.service.schemas import AuditEntry, EntityEdit, EntityMerge, Neighbours, NodeOut, SearchHit

router = APIRouter(prefix="/v1/workspaces/{ws}")
MAX_NEIGHBORS = 200


def _node(tg: ThinkGraph, node_id: str) -> NodeOut:
    node = tg.store.get_node(node_id)
    if node is None:
        raise NotFoundError(f"no node {node_id!r}")
    return NodeOut(id=node.id, type=node.type, text=node.text, props=node.props,
                   provenance=tg.store.provenance(node_id), degree=len(tg.store.edges_of(node_id)))


@router.get("/nodes/{node_id:path}/neighbors")
async def neighbors(request: Request, ws: str, node_id: str, edge_type: str | None = None,
                    limit: int = Query(50, ge=1, le=MAX_NEIGHBORS)) -> Neighbours:
    """The node's edges (of one type, or all) and the nodes at their other ends."""
    tg = workspaces(request).get(ws)
    _node(tg, node_id)
    edges = tg.store.edges_of(node_id, edge_type)[:limit]
    others = {n.id: n for n in tg.store.get_nodes([e.dst if e.src == node_id else e.src for e in edges])}
    return Neighbours(node=node_id, edges=edges, nodes=list(others.values()))


@router.get("/nodes/{node_id:path}")
async def node(request: Request, ws: str, node_id: str) -> NodeOut:
    """A node with its provenance (documents, passages and spans that support it) and its degree."""
    return _node(workspaces(request).get(ws), node_id)


@router.get("/search")
async def search(request: Request, ws: str, q: str = Query(min_length=1), type: str = "entity",  # noqa: A002
                 k: int = Query(10, ge=1, le=100)) -> list[SearchHit]:
    tg = workspaces(request).get(ws)
    tg.refresh()
    if type not in {t.value for t in NodeType}:
        raise InputError(f"unknown node type {type!r}; valid: {', '.join(t.value for t in NodeType)}")
    hits = tg.view.vectors(type).search(tg.view.embed_query(q), k)
    nodes = {n.id: n for n in tg.store.get_nodes([nid for nid, _ in hits])}
    return [SearchHit(id=nid, type=nodes[nid].type, text=nodes[nid].text, props=nodes[nid].props, score=score)
            for nid, score in hits if nid in nodes]


@router.get("/communities")
async def communities(request: Request, ws: str, level: int | None = None,
                      limit: int = Query(100, ge=1, le=1000)) -> list[Node]:
    tg = workspaces(request).get(ws)
    out: list[Node] = []
    for community in tg.store.iter_nodes(NodeType.COMMUNITY):
        if level is None or community.props.get("level") == level:
            out.append(community)
        if len(out) >= limit:
            break
    return out


async def _curate(request: Request, ws: str, change: str, *args: Any, **kwargs: Any) -> Node:
    return await jobs(request).write(ws, lambda writer: getattr(writer, change)(*args, **kwargs))


@router.patch("/entities/{node_id:path}")
async def edit_entity(request: Request, ws: str, node_id: str, body: EntityEdit) -> Node:
    return await _curate(request, ws, "edit_entity", node_id, name=body.name, description=body.description)


@router.post("/entities/merge")
async def merge_entities(request: Request, ws: str, body: EntityMerge) -> Node:
    return await _curate(request, ws, "merge_entities", body.sources, body.target)


@router.get("/audit")
async def audit(request: Request, ws: str, limit: int = Query(100, ge=1, le=1000)) -> list[AuditEntry]:
    return [AuditEntry(**entry) for entry in workspaces(request).get(ws).store.list_audit(limit)]
