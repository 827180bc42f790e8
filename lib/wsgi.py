"""A request body sent with `Transfer-Encoding: chunked` (no Content-Length) reaches Django whole.

Django reads as many body bytes as CONTENT_LENGTH says, so a chunked body read as empty: a verify
came back 400 "email is required". gunicorn de-chunks such a body and marks its input as
terminated (`wsgi.input_terminated`); this reads it, up to MAX_BODY_BYTES, and tells Django its
length. A server that cannot de-chunk (runserver) gets 411 in the error shape instead.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterable
from typing import Any

from lib.tokens import random_base62

# The largest body the service takes: a 25 MB upload and its multipart framing.
MAX_BODY_BYTES = 26 * 1024 * 1024

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class ChunkedBodies:
    def __init__(self, app: WSGIApp) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        if not chunked or environ.get("CONTENT_LENGTH"):
            return self.app(environ, start_response)
        if not environ.get("wsgi.input_terminated"):
            return _error(start_response, "411 Length Required", "length_required", "Send a Content-Length header.")
        body = environ["wsgi.input"].read(MAX_BODY_BYTES + 1)
        if len(body) > MAX_BODY_BYTES:
            return _error(start_response, "413 Content Too Large", "request_too_large", "The body is too large.")
        environ["CONTENT_LENGTH"] = str(len(body))
        environ["wsgi.input"] = io.BytesIO(body)
        return self.app(environ, start_response)


def _error(start_response: Callable[..., Any], status: str, code: str, message: str) -> list[bytes]:
    body = json.dumps({"error": {"code": code, "message": message, "param": None}}).encode()
    headers = [
        ("Content-Type", "application/json; charset=utf-8"),
        ("Content-Length", str(len(body))),
        ("X-Request-Id", "req_" + random_base62(20)),
        ("Connection", "close"),
    ]
    start_response(status, headers)
    return [body]
