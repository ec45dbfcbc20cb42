"""Methods, workspaces and documents: upsert by stable id, upload of one or several files (indexed
at once or in the background with progress), re-index, delete, status."""

from __future__ import annotations

import dataclasses
import re
from pathlib import PurePath, PurePosixPath, PureWindowsPath

from fastapi import APIRouter, File, Form, Query, Request, UploadFile

from thinkgraph.api import ThinkGraph
from thinkgraph.errors import InputError, NotFoundError
from thinkgraph.ids import document_node_id
from thinkgraph.index.formats import parse_document
from thinkgraph.locations import PARTS_PROP, parts_from_props
from thinkgraph.models import EdgeType, NodeType, SourceDocument
from thinkgraph.service.jobs import Job, Jobs
from thinkgraph.service.method_info import method_infos
from thinkgraph.service.schemas import (
    DocumentIn,
    DocumentOut,
    DocumentWritten,
    Health,
    MethodInfo,
    Progress,
    WorkspaceCreated,
    WorkspaceStats,
)
from thinkgraph.service.workspaces import Workspaces
from thinkgraph.store.base import RemovalReport

router = APIRouter(prefix="/v1")
_SAFE_ID = re.compile(r"[^A-Za-z0-9._-]+")
MAX_FILES = 50


def workspaces(request: Request) -> Workspaces:
    spaces: Workspaces = request.app.state.workspaces
    return spaces


def jobs(request: Request) -> Jobs:
    queue: Jobs = request.app.state.jobs
    return queue


def document_id_from_filename(filename: str) -> str:
    """The base name only (both path syntaxes), with unsafe characters replaced: an uploaded name
    never becomes a path, and is never written to disk."""
    base = PureWindowsPath(PurePosixPath(filename or "").name).name
    cleaned = _SAFE_ID.sub("_", base).strip("._")
    if not cleaned:
        raise InputError(f"file name {filename!r} gives no usable document id")
    return cleaned


def _progress(job: Job | None) -> Progress | None:
    return Progress(stage=job.stage, done=job.done, total=job.total) if job else None


def _document(tg: ThinkGraph, doc_id: str, job: Job | None = None) -> DocumentOut:
    record = tg.store.get_document(doc_id)
    if record is None:
        if job is not None:  # queued, not yet in the index
            return DocumentOut(id=doc_id, source="upload", title=job.title, content_hash="",
                               status="failed" if job.error else "queued", error=job.error, progress=_progress(job))
        raise NotFoundError(f"no document {doc_id!r} in the workspace")
    return DocumentOut.of(record, _progress(job))


async def _write(request: Request, ws: str, doc: SourceDocument, wait: bool) -> DocumentWritten:
    tg = workspaces(request).get(ws)
    if not wait:
        job = jobs(request).index_later(ws, doc)
        return DocumentWritten(document=_document(tg, doc.id, job) if tg.store.get_document(doc.id) else
                               DocumentOut(id=doc.id, source=doc.source, title=doc.title, content_hash="",
                                           status="queued", n_chars=len(doc.text), progress=_progress(job)))
    report = await jobs(request).index(ws, doc)
    return DocumentWritten(document=_document(tg, doc.id), report=report)


@router.get("/health")
async def health() -> Health:
    return Health()


@router.get("/methods")
async def methods(request: Request) -> list[MethodInfo]:
    """Every method with its settings (name, type, default, choices, description)."""
    return method_infos(workspaces(request).settings())


@router.get("/workspaces")
async def list_workspaces(request: Request) -> list[str]:
    return workspaces(request).names()


@router.post("/workspaces/{ws}", status_code=201)
async def create_workspace(request: Request, ws: str) -> WorkspaceCreated:
    workspaces(request).get(ws, create=True)
    return WorkspaceCreated(workspace=ws)


@router.get("/workspaces/{ws}")
async def workspace_stats(request: Request, ws: str) -> WorkspaceStats:
    return WorkspaceStats(**workspaces(request).get(ws).stats())


@router.put("/workspaces/{ws}/documents/{doc_id:path}")
async def put_document(request: Request, ws: str, doc_id: str, body: DocumentIn,
                       wait: bool = Query(True, description="false: return at once and index in the background")
                       ) -> DocumentWritten:
    doc = SourceDocument(id=doc_id, title=body.title or doc_id, text=body.text, source=f"api:{doc_id}")
    return await _write(request, ws, doc, wait)


async def _parsed(upload: UploadFile) -> SourceDocument:
    name = document_id_from_filename(upload.filename or "")
    parsed = parse_document(name, await upload.read())
    # titled as `thinkgraph index` titles the same file: its own title, or its name without the extension
    return SourceDocument(id=name, title=parsed.title or PurePath(name).stem or name, text=parsed.text,
                          source=f"upload:{name}", page_starts=parsed.page_starts, parts=parsed.parts)


@router.post("/workspaces/{ws}/documents")
async def upload_document(request: Request, ws: str, file: UploadFile = File(...),
                          doc_id: str | None = Form(default=None), wait: bool = Query(True)) -> DocumentWritten:
    """One file (.txt .md .html .pdf .docx .pptx .xlsx .ods .csv .epub .odt); its id is its base name unless
    ``doc_id`` is given."""
    doc = await _parsed(file)
    if doc_id:
        doc = dataclasses.replace(doc, id=doc_id)
    return await _write(request, ws, doc, wait)


@router.post("/workspaces/{ws}/uploads")
async def upload_documents(request: Request, ws: str, files: list[UploadFile] = File(...)) -> list[DocumentWritten]:
    """Several files at once, indexed in the background (watch GET .../documents); a file that cannot
    be read is refused before any is queued."""
    if len(files) > MAX_FILES:
        raise InputError(f"at most {MAX_FILES} files per upload, not {len(files)}")
    workspaces(request).get(ws)
    docs = [await _parsed(f) for f in files]
    return [await _write(request, ws, doc, wait=False) for doc in docs]


@router.get("/workspaces/{ws}/documents")
async def list_documents(request: Request, ws: str) -> list[DocumentOut]:
    tg = workspaces(request).get(ws)
    running = jobs(request).of(ws)
    listed = [DocumentOut.of(d, _progress(running.get(d.id))) for d in tg.store.list_documents()]
    known = {d.id for d in listed}
    return listed + [_document(tg, doc_id, job) for doc_id, job in running.items() if doc_id not in known]


@router.get("/workspaces/{ws}/documents/{doc_id:path}")
async def get_document(request: Request, ws: str, doc_id: str) -> DocumentOut:
    return _document(workspaces(request).get(ws), doc_id, jobs(request).of(ws).get(doc_id))


def document_text(tg: ThinkGraph, doc_id: str) -> str:
    """The document's text put back together from its chunks (each is an exact slice of it)."""
    chunks = [tg.store.get_node(e.src) for e in tg.store.edges_of(document_node_id(doc_id), EdgeType.PART_OF)]
    spans = sorted((p.start or 0, p.end or 0, n.text) for n in chunks if n is not None and n.type == NodeType.CHUNK
                   for p in tg.store.provenance(n.id) if p.chunk_id == n.id)
    text, end = "", 0
    for start, stop, chunk in spans:
        if stop > end:
            text += (" " * (start - end) if start > end else "") + chunk[max(0, end - start):]
            end = stop
    return text


@router.post("/workspaces/{ws}/documents/{doc_id:path}/reindex")
async def reindex_document(request: Request, ws: str, doc_id: str, wait: bool = Query(True)) -> DocumentWritten:
    """Extract the document again (after a failure, or with a changed configuration); model replies
    already cached in the index are reused."""
    tg = workspaces(request).get(ws)
    record = tg.store.get_document(doc_id)
    if record is None:
        raise NotFoundError(f"no document {doc_id!r} in the workspace")
    text = document_text(tg, doc_id)
    if not text.strip():
        raise InputError(f"document {doc_id!r} has no stored text to index again; upload it again")
    node = tg.store.get_node(document_node_id(doc_id))
    pages = tuple(node.props.get("page_starts") or ()) if node else ()
    parts = tuple(parts_from_props(node.props.get(PARTS_PROP))) if node else ()
    await jobs(request).write(ws, lambda writer: writer.remove_document(doc_id, rebuild=False))
    doc = SourceDocument(id=doc_id, title=record.title, text=text, source=record.source, page_starts=pages,
                         parts=parts)
    return await _write(request, ws, doc, wait)


@router.delete("/workspaces/{ws}/documents/{doc_id:path}")
async def delete_document(request: Request, ws: str, doc_id: str) -> RemovalReport:
    queued = jobs(request).of(ws).get(doc_id)
    jobs(request).forget(ws, doc_id)
    if queued is not None and workspaces(request).get(ws).store.get_document(doc_id) is None:
        return RemovalReport(doc_id, 0, 0)  # a failed or queued upload that never reached the index
    return await jobs(request).write(ws, lambda writer: writer.remove_document(doc_id))

