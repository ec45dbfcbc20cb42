"""The listening socket of `thinkgraph serve --workers N`: accepted connections must get TCP_NODELAY
(uvicorn's own bound socket reports protocol 0, and asyncio then leaves Nagle's algorithm on)."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys

from thinkgraph.service.listener import TcpConfig


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


def test_a_serving_process_runs_blas_on_one_thread() -> None:
    probe = ("from thinkgraph.service.entry import limit_blas_threads; limit_blas_threads(); "
             "from threadpoolctl import threadpool_info; "
             "print(sorted({i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas'}))")
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "2"}  # what the limit overrides
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, env=env,
                          check=True)
    assert done.stdout.strip() == "[1]"
