"""An MCP server over the service's workspaces, for agent clients (`thinkgraph mcp` speaks it over
stdio): list workspaces and documents, ask (an answer of bounded length with its citations), and
retrieve (passages and graph paths without an LLM). Errors are one line that says what to change."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from thinkgraph.api import ThinkGraph
from thinkgraph.citations import excerpt
from thinkgraph.errors import ThinkgraphError
from thinkgraph.methods.catalog import DEFAULT_METHOD, METHOD_NAMES
from thinkgraph.models import Answer, Citation
from thinkgraph.service.security import redact
from thinkgraph.service.workspaces import UnknownWorkspaceError, Workspaces

DEFAULT_WORKSPACE = "default"
MAX_ANSWER_CHARS = 2000  # an agent's context is precious: long answers are cut, and say so
MAX_QUOTE_CHARS = 300
MAX_CITATIONS = 10


def _citation(c: Citation) -> dict[str, Any]:
    return {"doc_id": c.doc_id, "chunk_id": c.chunk_id, "start": c.start, "end": c.end, "page": c.page,
            "location": c.location, "quote": excerpt(c.quote, MAX_QUOTE_CHARS)}


def answer_payload(answer: Answer) -> dict[str, Any]:
    """The answer cut to a bounded length; an answer that claims support ('answered') carries its
    citations, and one without any says it is unsupported."""
    text = answer.text or ""
    cut = len(text) > MAX_ANSWER_CHARS
    status: str = answer.status
    if status == "answered" and not answer.citations:
        status = "unsupported"  # the method answered without citing a source
    return {"answer": text[:MAX_ANSWER_CHARS] + (" [cut]" if cut else ""), "status": status,
            "message": answer.message, "citations": [_citation(c) for c in answer.citations[:MAX_CITATIONS]]}


def build_mcp_server(spaces: Workspaces) -> MCPServer:
    server = MCPServer(name="thinkgraph", instructions="Answer questions from an indexed document collection "
                       "with cited sources (ask), or fetch the supporting passages without an answer (retrieve). "
                       "list_workspaces and list_documents show what is indexed.")
    secrets = spaces.secrets()

    async def guarded(workspace: str, method: str | None, run: Any) -> Any:
        """``run(tg)`` on the workspace; bad input and failures become one line, never a traceback."""
        if method is not None and method not in METHOD_NAMES:
            raise ToolError(f"unknown method {method!r}; use one of {', '.join(METHOD_NAMES)}")
        try:
            return await run(spaces.get(workspace))
        except ThinkgraphError as exc:
            hint = " (list_workspaces shows the workspaces)" if isinstance(exc, UnknownWorkspaceError) else ""
            raise ToolError(redact(str(exc), secrets) + hint) from None

    @server.tool()
    async def list_workspaces() -> list[str]:
        """The workspaces (one document collection each) that can be asked."""
        return spaces.names()

    @server.tool()
    async def list_documents(workspace: str = DEFAULT_WORKSPACE) -> list[dict[str, Any]]:
        """The documents of a workspace with their indexing status."""
        async def run(tg: ThinkGraph) -> list[dict[str, Any]]:
            return [{"id": d.id, "title": d.title, "status": str(d.status), "chars": d.n_chars, "error": d.error}
                    for d in tg.store.list_documents()]
        listed: list[dict[str, Any]] = await guarded(workspace, None, run)
        return listed

    @server.tool()
    async def ask(question: str, method: str = DEFAULT_METHOD, workspace: str = DEFAULT_WORKSPACE) -> dict[str, Any]:
        """Answer a question from the workspace's documents: the answer (at most 2,000 characters),
        its status (answered, abstained, unsupported, evidence_only without an LLM) and its citations."""
        return answer_payload(await guarded(workspace, method, lambda tg: tg.aask(question, method)))

    @server.tool()
    async def retrieve(question: str, method: str = DEFAULT_METHOD, workspace: str = DEFAULT_WORKSPACE
                       ) -> dict[str, Any]:
        """The passages and graph paths a method finds for a question, without asking an LLM."""
        answer = await guarded(workspace, method, lambda tg: tg.aretrieve(question, method))
        return {"citations": [_citation(c) for c in answer.citations[:MAX_CITATIONS]],
                "paths": answer.evidence.path_texts[:MAX_CITATIONS]}

    return server
