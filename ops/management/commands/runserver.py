"""`runserver`, as `make run` serves: Django's (with its static files), each connection's replies
sent at once rather than held for the client's acknowledgement."""

from __future__ import annotations

import socket

from django.contrib.staticfiles.management.commands.runserver import Command as StaticRunserver
from django.core.servers.basehttp import WSGIServer


class NoDelayWSGIServer(WSGIServer):
    """Django's development server with TCP_NODELAY on each accepted connection.

    It sends a reply's head and body in separate writes. On a connection kept alive for the next
    request (the Python client's httpx, every browser), Nagle's algorithm held the body until the
    client acknowledged the head, and Linux delays that acknowledgement by 40 ms: every request
    after a connection's first took about 44 ms instead of 1 to 5 (CPython issue 108736, still open
    for http.server, on which this server is built). gunicorn's sync workers close each connection,
    so production never waited so."""

    def get_request(self) -> tuple[socket.socket, object]:
        conn, address = super().get_request()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn, address


class Command(StaticRunserver):
    server_cls = NoDelayWSGIServer
