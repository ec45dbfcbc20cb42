"""Service settings, given by the `serve` command (never read from the environment at import)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

from thinkgraph.errors import ConfigError

DEFAULT_MAX_REQUEST_BYTES = 25_000_000
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
TOKEN_ENV = "THINKGRAPH_SERVICE_TOKEN"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class ServiceSettings:
    root: Path  # one sub-folder per workspace
    host: str = "127.0.0.1"
    port: int = 8765
    token: str | None = None
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    config_path: Path | None = None  # thinkgraph.toml for every workspace
    store: str | None = None  # a PostgreSQL URL: each workspace a schema there (else a folder under root)
    # Host names (besides loopback) that token-less requests may carry in Host and Origin.
    allowed_hosts: tuple[str, ...] = ()

    def check(self) -> None:
        if not self.token and not is_loopback(self.host):
            raise ConfigError(f"serving on {self.host} needs an access token: set it in the environment variable "
                              f"{TOKEN_ENV} (or name another with --token-env); without one, bind to 127.0.0.1")

    def __repr__(self) -> str:  # the token never shows in a log or traceback
        token = "***" if self.token else None
        return f"ServiceSettings(root={self.root!r}, host={self.host!r}, port={self.port}, token={token})"
