"""A PostgreSQL index location from its URL: ``postgresql://user@host:port/db?schema=ws1``.

Two query parameters are thinkgraph's own and never reach the server: ``schema`` (the schema that
holds the index, default ``thinkgraph``) and ``password_env`` (the environment variable holding the
password). Without ``password_env`` libpq finds the password itself (``PGPASSWORD``, ``~/.pgpass``).
A password typed into the URL works too, but is never shown: every message uses ``display``."""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

from thinkgraph.errors import ConfigError

SCHEMES = ("postgresql", "postgres")
DEFAULT_SCHEMA = "thinkgraph"
CACHE_ENV = "THINKGRAPH_CACHE_DIR"
_SCHEMA_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]{0,62}$")
_OWN_PARAMS = ("schema", "password_env")


def is_postgres_url(location: str) -> bool:
    return urlsplit(location).scheme.lower() in SCHEMES


@dataclass(frozen=True)
class PgLocation:
    url: str = field(repr=False)  # as given (may hold a password: never shown)
    conninfo: str = field(repr=False)  # for libpq: without thinkgraph's parameters and the password
    schema: str
    display: str  # the URL with the password masked
    password: str | None = field(default=None, repr=False)

    def with_schema(self, schema: str) -> PgLocation:
        parts = urlsplit(self.url)
        query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "schema"]
        query.append(("schema", schema))
        return parse_location(_url(parts.scheme, parts.netloc, parts.path, urlencode(query, quote_via=quote)))

    def redact(self, text: str) -> str:
        """``text`` (an error from the driver, say) with the password masked wherever it appears."""
        if self.password:
            text = text.replace(self.password, "***").replace(quote(self.password, safe=""), "***")
        return text

    def cache_dir(self) -> Path:
        """A local folder for files derived from this index (the typed graph): under
        $THINKGRAPH_CACHE_DIR, else $XDG_CACHE_HOME/thinkgraph, else ~/.cache/thinkgraph."""
        root = os.environ.get(CACHE_ENV)
        base = Path(root) if root else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "thinkgraph"
        server = hashlib.sha256(self.conninfo.encode()).hexdigest()[:12]
        return base / "postgres" / server / self.schema


def check_schema_name(schema: str) -> str:
    if not _SCHEMA_NAME.match(schema):
        raise ConfigError(f"schema name {schema!r} must be 1-63 letters, digits, '_' or '-'")
    return schema


def parse_location(url: str) -> PgLocation:
    parts = urlsplit(url)
    if parts.scheme.lower() not in SCHEMES:
        raise ConfigError(f"not a PostgreSQL URL (scheme {parts.scheme!r}); use postgresql://...")
    params = dict(parse_qsl(parts.query, keep_blank_values=True))
    schema = check_schema_name(params.get("schema") or DEFAULT_SCHEMA)
    password = unquote(parts.password) if parts.password else None
    env = params.get("password_env")
    if env and password is None:
        password = os.environ.get(env)
        if password is None:
            raise ConfigError(f"the environment variable {env!r} named by password_env is not set")
    own = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in _OWN_PARAMS]
    query = urlencode(own, quote_via=quote)  # %20 for a space: libpq reads no '+'
    host = parts.netloc.rpartition("@")[2]  # host[:port] as written (IPv6 keeps its brackets)
    conninfo = _url(parts.scheme, _netloc(parts.username, host, None), parts.path, query)
    display = _url(parts.scheme, _netloc(parts.username, host, "***" if parts.password else None), parts.path,
                   parts.query)
    return PgLocation(url=url, conninfo=conninfo, schema=schema, display=display, password=password)


def _url(scheme: str, netloc: str, path: str, query: str) -> str:
    return f"{scheme}://{netloc}{path}" + (f"?{query}" if query else "")


def _netloc(user: str | None, host: str, password: str | None) -> str:
    auth = ""
    if user:
        auth = quote(unquote(user), safe="") + (f":{password}" if password else "") + "@"
    return f"{auth}{host}"
