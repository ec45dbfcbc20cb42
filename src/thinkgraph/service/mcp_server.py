"""An MCP server exposing `ask` and `retrieve` over the service's workspaces, for agent clients
(`thinkgraph mcp` speaks it over stdio)."""

from __future__ import annotations

import dataclasses
from typing import Any

from mcp.server.mcpserver import MCPServer

from thinkgraph.methods.registry import DEFAULT_METHOD
from thinkgraph.service.workspaces import Workspaces

DEFAULT_WORKSPACE = "default"


def build_mcp_server(spaces: Workspaces) -> MCPServer:
    server = MCPServer(name="thinkgraph", instructions="Answer questions from an indexed document collection "
                       "with cited sources (ask), or fetch the supporting passages without an answer (retrieve).")

    @server.tool()
    async def ask(question: str, method: str = DEFAULT_METHOD, workspace: str = DEFAULT_WORKSPACE) -> dict[str, Any]:
        """Answer a question from the workspace's documents; returns the answer, its status and citations."""
        answer = await spaces.get(workspace).aask(question, method)
        return {"answer": answer.text, "status": answer.status, "message": answer.message,
                "citations": [dataclasses.asdict(c) for c in answer.citations]}

    @server.tool()
    async def retrieve(question: str, method: str = DEFAULT_METHOD, workspace: str = DEFAULT_WORKSPACE
                       ) -> dict[str, Any]:
        """The passages and graph paths a method finds for a question, without asking an LLM."""
        answer = await spaces.get(workspace).aretrieve(question, method)
        return {"citations": [dataclasses.asdict(c) for c in answer.citations],
                "paths": answer.evidence.path_texts}

    return server
