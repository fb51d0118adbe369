"""``foretab serve --workers N`` listens with one socket per worker on one port (Linux)."""

from __future__ import annotations

import socket
import sys

import pytest

from foretab.errors import ForetabError
from foretab.web.workers import bind, bind_each

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="SO_REUSEPORT spreads on Linux")


@linux_only
def test_each_worker_gets_its_own_socket_on_one_port() -> None:
    sockets = bind_each("127.0.0.1", 0, 3)
    try:
        assert len({id(s) for s in sockets}) == 3
        assert len({s.getsockname()[1] for s in sockets}) == 1  # port 0: one chosen port
        for sock in sockets:
            assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT) == 1
    finally:
        for sock in sockets:
            sock.close()


@linux_only
def test_new_connections_reach_every_socket() -> None:
    sockets = bind_each("127.0.0.1", 0, 2)
    port = sockets[0].getsockname()[1]
    clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(64)]
    try:
        for sock in sockets:
            sock.setblocking(False)
        accepted = [0, 0]
        for i, sock in enumerate(sockets):
            while True:
                try:
                    conn, _ = sock.accept()
                except BlockingIOError:
                    break
                conn.close()
                accepted[i] += 1
        assert sum(accepted) == 64
        assert min(accepted) > 0  # 64 connections all on one of two: chance 2 ** -63
    finally:
        for sock in [*clients, *sockets]:
            sock.close()


@pytest.mark.parametrize("reuse", [False, True])
def test_a_port_another_server_holds_is_refused_not_shared(reuse: bool) -> None:
    held = bind_each("127.0.0.1", 0, 2) if reuse else [bind("127.0.0.1", 0)]
    port = held[0].getsockname()[1]
    try:
        with pytest.raises(ForetabError, match="cannot listen"):
            bind_each("127.0.0.1", port, 2)
    finally:
        for sock in held:
            sock.close()


def test_one_worker_has_one_plain_socket() -> None:
    (sock,) = bind_each("127.0.0.1", 0, 1)
    try:
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT) == 0
    finally:
        sock.close()
