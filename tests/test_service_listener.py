"""The listening socket of `thinkgraph serve --workers N`: accepted connections must get TCP_NODELAY
(uvicorn's own bound socket reports protocol 0, and asyncio then leaves Nagle's algorithm on)."""

from __future__ import annotations

import asyncio
import socket

from thinkgraph.service.listener import TcpConfig, limit_worker_threads, threads_per_worker


def _nodelay_of_accepted(sock: socket.socket) -> int:
    """TCP_NODELAY of a connection that an asyncio server on ``sock`` accepts."""

    async def main() -> int:
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            raw = writer.get_extra_info("socket")
            seen.set_result(raw.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(accepted, sock=sock)
        host, port = sock.getsockname()[:2]
        _, writer = await asyncio.open_connection(host, port)
        try:
            return await asyncio.wait_for(seen, 10)
        finally:
            writer.close()
            server.close()

    return asyncio.run(main())


def test_the_bound_socket_names_tcp_so_accepted_connections_get_nodelay() -> None:
    sock = TcpConfig("thinkgraph.service.entry:app_from_environment", host="127.0.0.1", port=0).bind_socket()
    assert sock.proto == socket.IPPROTO_TCP
    assert _nodelay_of_accepted(sock) != 0


def test_a_listener_without_the_protocol_leaves_nagle_on() -> None:
    """What uvicorn's own bind gives (protocol 0): the check above can tell the difference."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 0)
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    assert _nodelay_of_accepted(sock) == 0


def test_math_threads_are_divided_among_workers_unless_set() -> None:
    assert threads_per_worker(2, cores=2) == 1
    assert threads_per_worker(1, cores=2) == 2
    assert threads_per_worker(4, cores=2) == 1
    env = {"OMP_NUM_THREADS": "3"}
    limit_worker_threads(8, env)
    assert env["OMP_NUM_THREADS"] == "3"  # the user's choice stays
    assert env["OPENBLAS_NUM_THREADS"] == env["MKL_NUM_THREADS"] == "1"
