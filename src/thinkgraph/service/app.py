"""The FastAPI application: access control, request-size limit, errors in one shape (OpenAI's
``{"error": {...}}``, with known secrets redacted), the web page, offline API docs, and the routers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, MutableMapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from thinkgraph.errors import (
    ConfigError,
    IncompleteIndexError,
    IndexFileError,
    InputError,
    LLMError,
    NotFoundError,
    ThinkgraphError,
    UnknownMethodError,
)
from thinkgraph.service.jobs import Jobs
from thinkgraph.service.schemas import ErrorOut
from thinkgraph.service.security import HostOriginGuard, SecretMask, docs_allowed, require_token
from thinkgraph.service.settings import ServiceSettings
from thinkgraph.service.workspaces import UnknownWorkspaceError, Workspaces

STATIC = Path(__file__).parent / "static"
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
               404: "not_found_error", 405: "invalid_request_error", 413: "request_too_large",
               422: "invalid_request_error", 502: "upstream_error"}


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
            response = error_response(413, f"request body over {self.limit} bytes")
            await response(scope, receive, send)
            return
        seen = 0

        async def counted() -> MutableMapping[str, Any]:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise HTTPException(413, f"request body over {self.limit} bytes")
            return message

        await self.app(scope, counted, send)


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    body = {"error": {"message": message, "type": ERROR_TYPES.get(status, "server_error"), "param": None,
                      "code": str(status)}}
    return JSONResponse(body, status_code=status, headers=headers)


def _status(exc: ThinkgraphError) -> int:
    if isinstance(exc, UnknownWorkspaceError | NotFoundError):
        return 404
    if isinstance(exc, InputError | ConfigError | UnknownMethodError | IndexFileError):
        return 400
    if isinstance(exc, LLMError):
        return 502
    if isinstance(exc, IncompleteIndexError):  # derived stages are being (re)built: retry shortly
        return 503
    return 500


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for error in exc.errors()[:3]:
        if error.get("type") == "json_invalid":  # its location is a character offset, not a field
            why = (error.get("ctx") or {}).get("error") or error.get("msg", "JSON decode error")
            at = [p for p in error.get("loc", ()) if isinstance(p, int)]
            parts.append(f"the request body is not valid JSON: {why}" + (f" at character {at[0]}" if at else ""))
            continue
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body")
        parts.append(f"{where or 'body'}: {error.get('msg', 'invalid')}")
    return "; ".join(parts)


def _install_errors(app: FastAPI, scrub: Callable[[str], str]) -> None:
    @app.exception_handler(ThinkgraphError)
    async def thinkgraph_error(request: Request, exc: ThinkgraphError) -> JSONResponse:
        return error_response(_status(exc), scrub(str(exc)))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return error_response(exc.status_code, scrub(str(exc.detail)), getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(422, scrub(_validation_message(exc)))


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's schema, with its validation-error responses (422) in the shape the service sends."""
    if app.openapi_schema is None:
        schema = app.openapi()
        for path in schema["paths"].values():
            for operation in path.values():
                if "422" in operation.get("responses", {}):
                    operation["responses"]["422"] = {"description": "Invalid request", "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}}}
        for unused in ("HTTPValidationError", "ValidationError"):
            schema.get("components", {}).get("schemas", {}).pop(unused, None)
    assert app.openapi_schema is not None  # (app.openapi() made it)
    return app.openapi_schema


def _install_docs(app: FastAPI) -> None:
    """Swagger UI from the vendored bundle (works offline); behind the token when one is set."""

    @app.get("/openapi.json", include_in_schema=False)
    async def openapi(request: Request) -> JSONResponse:
        if not docs_allowed(request):
            return error_response(401, "missing or wrong access token", {"WWW-Authenticate": "Bearer"})
        return JSONResponse(_openapi(app))

    @app.get("/docs", include_in_schema=False)
    async def docs(request: Request) -> HTMLResponse:
        if not docs_allowed(request):
            return HTMLResponse("<p>The API documentation needs the access token: enter it on the "
                                "<a href='/'>main page</a> first.</p>", status_code=401)
        return get_swagger_ui_html(openapi_url="/openapi.json", title="thinkgraph API",
                                   swagger_js_url="/static/vendor/swagger-ui-bundle.js",
                                   swagger_css_url="/static/vendor/swagger-ui.css",
                                   swagger_favicon_url="/static/favicon.svg")


def create_app(settings: ServiceSettings) -> FastAPI:
    from thinkgraph.service.routes_api import router as api_router
    from thinkgraph.service.routes_ask import router as ask_router
    from thinkgraph.service.routes_graph import router as graph_router
    from thinkgraph.service.routes_openai import router as openai_router

    settings.check()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        await app.state.jobs.close()
        app.state.workspaces.close()

    app = FastAPI(title="thinkgraph", version="0.1", lifespan=lifespan, docs_url=None, redoc_url=None,
                  openapi_url=None, description="Knowledge-graph question answering with cited, traceable answers. "
                  "Errors are `{\"error\": {\"message\", \"type\", \"code\"}}`.",
                  responses={400: {"model": ErrorOut}, 401: {"model": ErrorOut}, 404: {"model": ErrorOut}})
    spaces = Workspaces(settings.root, settings.config_path, settings.store)
    secrets = [settings.token, *spaces.secrets()]
    app.state.settings = settings
    app.state.workspaces = spaces
    app.state.jobs = Jobs(spaces)
    app.state.redact = SecretMask(secrets)
    secured = [Depends(require_token)]
    for router in (api_router, ask_router, graph_router, openai_router):
        app.include_router(router, dependencies=secured)
    _install_errors(app, app.state.redact)
    _install_docs(app)

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.add_middleware(BodyLimit, limit=settings.max_request_bytes)
    app.add_middleware(HostOriginGuard, settings=settings)
    return app
