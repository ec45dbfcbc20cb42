"""Who may call the service: the access token (bearer scheme, any case, constant-time compare) and,
without a token, a Host/Origin allow-list, so that a web page the user happens to visit cannot drive
a loopback service by cross-site requests or DNS rebinding. Also the redaction of known secrets from
every message the service sends back."""

from __future__ import annotations

import hmac
import json
from collections.abc import Iterable
from urllib.parse import urlsplit

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.types import ASGIApp, Receive, Scope, Send

from thinkgraph.service.settings import LOOPBACK_NAMES, ServiceSettings

# The web page keeps the token the user typed in this cookie (SameSite=Strict) so that /docs, opened
# by navigation (no Authorization header), can be read; the API itself accepts the header only.
DOCS_COOKIE = "thinkgraph_token"
bearer = HTTPBearer(auto_error=False, description="The service token (THINKGRAPH_SERVICE_TOKEN).")


def token_matches(given: str | None, token: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


def bearer_token(header: str | None) -> str | None:
    """The credentials of an ``Authorization: Bearer ...`` header; the scheme is case-insensitive."""
    scheme, _, value = (header or "").strip().partition(" ")
    return value.strip() or None if scheme.lower() == "bearer" else None


async def require_token(request: Request, _: HTTPAuthorizationCredentials | None = Depends(bearer)) -> None:
    """Dependency of every API route (the parameter only makes OpenAPI show the bearer scheme)."""
    token = request.app.state.settings.token
    if token and not token_matches(bearer_token(request.headers.get("authorization")), token):
        raise HTTPException(401, "missing or wrong access token", headers={"WWW-Authenticate": "Bearer"})


def docs_allowed(request: Request) -> bool:
    token = request.app.state.settings.token
    if not token:
        return True
    given = bearer_token(request.headers.get("authorization")) or request.cookies.get(DOCS_COOKIE)
    return token_matches(given, token)


def _hostname(value: str) -> str:
    """The host of a ``Host`` header or an origin, lower-case, without port or IPv6 brackets."""
    netloc = urlsplit(value).netloc if "://" in value else value
    host = netloc.rpartition("@")[2]
    if host.startswith("["):
        return host[1:].partition("]")[0].lower()
    return host.rpartition(":")[0].lower() if host.count(":") == 1 else host.lower()


class HostOriginGuard:
    """Without a token, refuse (403) requests whose Host, or Origin when sent, is not allowed:
    loopback names plus ``settings.allowed_hosts``."""

    def __init__(self, app: ASGIApp, settings: ServiceSettings) -> None:
        self.app = app
        self.active = not settings.token
        self.allowed = {*LOOPBACK_NAMES, *(h.lower() for h in settings.allowed_hosts)}

    def allows(self, headers: Iterable[tuple[bytes, bytes]]) -> str | None:
        """None when allowed, else the reason."""
        values = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in headers}
        host = _hostname(values.get("host", ""))
        if host not in self.allowed:
            return f"host {host or '(none)'!r} is not allowed without an access token"
        origin = values.get("origin")
        if origin is not None and origin != "null" and _hostname(origin) not in self.allowed:
            return f"origin {origin!r} is not allowed without an access token"
        if origin == "null":
            return "origin 'null' is not allowed without an access token"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.active and scope["type"] in ("http", "websocket"):
            reason = self.allows(scope.get("headers") or [])
            if reason is not None and scope["type"] == "http":
                body = json.dumps({"error": {"message": reason, "type": "permission_error", "code": "403"}}).encode()
                await send({"type": "http.response.start", "status": 403,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
            if reason is not None:
                return
        await self.app(scope, receive, send)


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every known secret (of four characters or more) replaced."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    return text


class SecretMask:
    """``redact`` for the service's known secrets, and how much of a text's end may still become one
    (a streamed reply is masked as a whole, so its tail waits while it could be a secret's start)."""

    def __init__(self, secrets: Iterable[str | None]) -> None:
        self.secrets = [s for s in secrets if s and len(s) >= 4]

    def __call__(self, text: str) -> str:
        return redact(text, self.secrets)

    def unsafe_tail(self, text: str) -> int:
        """The length of the longest end of ``text`` that a secret starts with (0: none)."""
        return max((n for secret in self.secrets for n in range(min(len(secret) - 1, len(text)), 0, -1)
                    if secret.startswith(text[-n:])), default=0)
