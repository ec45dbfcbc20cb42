"""The FastAPI application: auth, request-size limit, error mapping, the web page, and the routers."""

from __future__ import annotations

import secrets
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from thinkgraph.errors import (
    ConfigError,
    IncompleteIndexError,
    IndexFileError,
    InputError,
    ThinkgraphError,
    UnknownMethodError,
)
from thinkgraph.service.settings import ServiceSettings
from thinkgraph.service.workspaces import UnknownWorkspaceError, Workspaces

STATIC = Path(__file__).parent / "static"


class BodyLimit:
    """Refuse request bodies over ``limit`` bytes (413), whether or not they declare a length."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._refuse(send)
            return
        seen = 0

        async def counted() -> dict[str, Any]:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise HTTPException(413, f"request body over {self.limit} bytes")
            return message

        await self.app(scope, counted, send)

    async def _refuse(self, send: Send) -> None:
        body = f'{{"detail": "request body over {self.limit} bytes"}}'.encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


def require_token(request: Request) -> None:
    token = request.app.state.settings.token
    if not token:
        return
    header = request.headers.get("authorization", "")
    given = header.removeprefix("Bearer ").strip() if header.startswith("Bearer ") else ""
    if not secrets.compare_digest(given.encode(), token.encode()):
        raise HTTPException(401, "missing or wrong access token", headers={"WWW-Authenticate": "Bearer"})


def _status(exc: ThinkgraphError) -> int:
    if isinstance(exc, UnknownWorkspaceError):
        return 404
    if isinstance(exc, InputError | ConfigError | UnknownMethodError | IndexFileError):
        return 400
    if isinstance(exc, IncompleteIndexError):  # derived stages are being (re)built: retry shortly
        return 503
    return 500


def create_app(settings: ServiceSettings) -> FastAPI:
    from thinkgraph.service.routes_api import router as api_router
    from thinkgraph.service.routes_graph import router as graph_router
    from thinkgraph.service.routes_openai import router as openai_router

    settings.check()

    @asynccontextmanager
    async def lifespan(app: FastAPI):  # noqa: ANN202
        yield
        app.state.workspaces.close()

    app = FastAPI(title="thinkgraph", version="0.1", lifespan=lifespan,
                  description="Knowledge-graph question answering with cited, traceable answers.")
    app.state.settings = settings
    app.state.workspaces = Workspaces(settings.root, settings.config_path)
    secured = [Depends(require_token)]
    app.include_router(api_router, dependencies=secured)
    app.include_router(graph_router, dependencies=secured)
    app.include_router(openai_router, dependencies=secured)

    @app.exception_handler(ThinkgraphError)
    async def thinkgraph_error(request: Request, exc: ThinkgraphError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=_status(exc))

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.add_middleware(BodyLimit, limit=settings.max_request_bytes)
    return app
