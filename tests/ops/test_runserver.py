"""`make run`'s `runserver`: Django's, static files included, with each connection's replies sent at
once (TCP_NODELAY), not held back 40 ms for a kept-alive client's acknowledgement."""

from __future__ import annotations

import socket

from django.contrib.staticfiles.management.commands.runserver import Command as StaticRunserver
from django.core.management import get_commands, load_command_class
from django.core.servers.basehttp import WSGIRequestHandler

from ops.management.commands.runserver import NoDelayWSGIServer


def test_the_runserver_run_is_ours_and_still_serves_static_files() -> None:
    assert get_commands()["runserver"] == "ops"
    command = load_command_class("ops", "runserver")
    assert isinstance(command, StaticRunserver)
    assert command.server_cls is NoDelayWSGIServer


def test_each_accepted_connection_sends_without_waiting_for_acknowledgements() -> None:
    server = NoDelayWSGIServer(("127.0.0.1", 0), WSGIRequestHandler)
    try:
        with socket.create_connection(server.server_address[:2], timeout=5):
            conn, _ = server.get_request()
            with conn:
                assert conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
    finally:
        server.server_close()
