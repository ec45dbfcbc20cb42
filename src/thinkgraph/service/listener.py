"""Running uvicorn for `thinkgraph serve`, with the listening socket made so that every accepted
connection gets TCP_NODELAY.

With ``--workers N`` uvicorn binds the socket itself and hands it to the worker processes; that
socket reports protocol 0, accepted connections inherit it, and asyncio enables TCP_NODELAY only on
sockets that report IPPROTO_TCP. Nagle's algorithm then holds each small response until the
client's delayed ACK: every keep-alive request after the first took ~40 ms more (measured: single-
client `/retrieve` p50 64 ms with 2 workers against 20 ms with 1; uvicorn issue 3149). One worker
is unaffected (asyncio builds that listener from getaddrinfo, which names the protocol)."""

from __future__ import annotations

import socket
from typing import Any

import uvicorn
from uvicorn.supervisors import Multiprocess


class TcpConfig(uvicorn.Config):
    """uvicorn's Config whose bound TCP socket names its protocol (IPPROTO_TCP)."""

    def bind_socket(self) -> socket.socket:
        sock = super().bind_socket()
        if sock.family in (socket.AF_INET, socket.AF_INET6) and sock.proto != socket.IPPROTO_TCP:
            sock = socket.socket(sock.family, sock.type, socket.IPPROTO_TCP, fileno=sock.detach())
        return sock


def run(app: str, *, host: str, port: int, workers: int, **options: Any) -> None:
    """``uvicorn.run`` for a factory import string, with TCP_NODELAY on every worker's connections."""
    if workers <= 1:
        uvicorn.run(app, factory=True, host=host, port=port, **options)
        return
    config = TcpConfig(app, factory=True, host=host, port=port, workers=workers, **options)
    sock = config.bind_socket()
    try:
        Multiprocess(config, sockets=[sock]).run()
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
