"""`thinkgraph serve and mcp` commands (registered on the app of thinkgraph.cli.app)."""

from __future__ import annotations

import dataclasses
import json
import os
import socket
from pathlib import Path

import typer
from rich.markup import escape

from thinkgraph.cli.app import app, one_line_errors
from thinkgraph.cli.output import out
from thinkgraph.errors import ConfigError, InputError


@app.command()
@one_line_errors
def serve(
    ctx: typer.Context,
    root: Path = typer.Option(Path("workspaces"), "--root", help="Folder holding one index per workspace."),
    host: str = typer.Option("127.0.0.1", "--host"),
    port: int = typer.Option(8765, "--port", min=1, max=65535),
    workers: int = typer.Option(1, "--workers", min=1, help="Worker processes (they share each workspace's index)."),
    token_env: str = typer.Option("THINKGRAPH_SERVICE_TOKEN", "--token-env",
                                  help="Environment variable holding the access token (required off loopback)."),
    max_request_mb: float = typer.Option(25.0, "--max-request-mb", min=0.001),
    allow_host: list[str] = typer.Option([], "--allow-host", help="Without a token, a host name (besides "
                                         "loopback) that requests may carry in Host and Origin; repeatable."),
    store: str | None = typer.Option(None, "--store", help="PostgreSQL URL: each workspace in its own schema "
                                     "there (instead of a folder under --root); see `Choosing a store`."),
) -> None:
    """Serve the HTTP API, the web page and the OpenAI-compatible endpoint over workspaces."""
    from thinkgraph.service import listener
    from thinkgraph.service.settings import ServiceSettings

    settings = ServiceSettings(root=root, host=host, port=port, token=os.environ.get(token_env) or None,
                               max_request_bytes=int(max_request_mb * 1e6), config_path=ctx.obj["config"],
                               allowed_hosts=tuple(allow_host), store=store)
    settings.check()
    if store is None:
        try:  # before the banner: a file, or a place this user cannot write, is an input error
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"--root {root}: cannot use it as the workspaces folder ({exc.strerror or exc})") from None
    check_port_free(host, port)
    os.environ["THINKGRAPH_SERVICE_SETTINGS"] = json.dumps({**dataclasses.asdict(settings), "root": str(root),
                                                            "config_path": str(settings.config_path or "")})
    shown = f"[{host}]" if ":" in host else host
    from thinkgraph.store.factory import shown_location

    where = shown_location(store) if store else root
    out.print(escape(f"thinkgraph on http://{shown}:{port}/ (workspaces in {where}; API docs at /docs)"),
              highlight=False)
    listener.run("thinkgraph.service.entry:app_from_environment", host=host, port=port, workers=workers,
                 log_level="warning")


def check_port_free(host: str, port: int) -> None:
    """A clear error before anything is printed, rather than the server failing after the URL."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise ConfigError(f"cannot listen on {host}:{port} ({exc.strerror or exc}); is another server "
                              "running there? Choose another port with --port") from None


@app.command()
@one_line_errors
def mcp(
    ctx: typer.Context,
    root: Path = typer.Option(Path("workspaces"), "--root", help="Folder holding one index per workspace."),
    store: str | None = typer.Option(None, "--store", help="PostgreSQL URL: each workspace a schema there."),
) -> None:
    """Serve `ask` and `retrieve` as MCP tools over stdio (for agent clients)."""
    from thinkgraph.service.mcp_server import build_mcp_server
    from thinkgraph.service.workspaces import Workspaces

    build_mcp_server(Workspaces(root, ctx.obj["config"], store)).run("stdio")
