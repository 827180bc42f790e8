"""gunicorn's settings for production: `.venv/bin/gunicorn -c config/gunicorn.conf.py`.

Binds 0.0.0.0:$PORT (8000) with $WEB_CONCURRENCY (2) worker processes of $WEB_THREADS (8) threads
each (gthread) unless told otherwise on the command line. Threads, not one request per process: a
deep verification waits on a mail server for up to 2 x VERIFIER_SMTP_TIMEOUT + 5 s, and with sync
workers four such requests held every process of `-w 4` while everyone else's requests queued.
A worker takes no more connections than it has threads (`worker_connections`; gthread would
otherwise go on accepting and queue a request behind busy threads), so while its threads wait on mail
servers the kernel hands new connections to the other workers. One account's deep requests in flight
are capped besides (docs/deep.md, "A slow mail server costs only
the customer who asked"). The request limits below are enforced by gunicorn before Django sees the request
(an over-long URL, too many or too large headers, a control character such as DEL in a header).
gunicorn answers those with a page of its own; `_write_contract_error` makes that answer the
contract's JSON error instead, with the same status (400, 414, 431, ...).
"""

from __future__ import annotations

import json
import os
import secrets
import socket

from gunicorn import util

wsgi_app = "config.wsgi:application"
bind = [f"0.0.0.0:{os.environ.get('PORT', '8000')}"]
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
worker_class = "gthread"
threads = int(os.environ.get("WEB_THREADS", "8"))
worker_connections = threads
# SIGTERM lets each worker finish the requests in hand for up to this long (a deep verification
# takes at most 2 x VERIFIER_SMTP_TIMEOUT + 5 s); Ctrl-C (SIGINT) stops them at once. Either way
# the master kills with SIGKILL any worker still there after it. gunicorn's default, written out
# because the README's "Ctrl-C stops both" is held to it (tests/docs/test_doc_commands.py).
graceful_timeout = 30
# Each connection is closed after its answer: a kept-alive idle one would hold a thread's place.
keepalive = 0
# No control socket: its default path is per user, so two instances on one machine would share it.
control_socket_disable = True

# Request line (method, URL, version) up to 8 KB: gunicorn's ceiling, twice its default.
limit_request_line = 8190
limit_request_fields = 100
limit_request_field_size = 8190

_CODES = {
    400: "invalid_request",
    403: "forbidden",
    414: "uri_too_long",
    417: "expectation_failed",
    431: "request_headers_too_large",
    500: "internal_error",
    501: "not_implemented",
}


def _write_contract_error(sock: socket.socket, status_int: int, reason: str, mesg: str) -> None:
    code = _CODES.get(status_int, "invalid_request")
    message = f"{reason}: {mesg}" if mesg else f"{reason}."
    body = json.dumps({"error": {"code": code, "message": message, "param": None}}).encode()
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\n"
        f"Content-Type: application/json; charset=utf-8\r\nContent-Length: {len(body)}\r\n"
        f"X-Request-Id: req_{secrets.token_hex(10)}\r\n\r\n"
    )
    util.write_nonblock(sock, head.encode("latin-1") + body)


# gunicorn has no setting for its error page; its workers call util.write_error for every
# request they refuse before the application runs, so that is where the shape is changed.
util.write_error = _write_contract_error
