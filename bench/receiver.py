"""A loopback HTTP receiver for bulk callbacks: checks ``X-Service-Signature``, records arrival times."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from docs.verify_signature import verify_signature


@dataclass
class Callback:
    arrived: float  # time.monotonic()
    body: dict[str, Any]
    signature_ok: bool


@dataclass
class Receiver:
    secret: str = ""
    callbacks: list[Callback] = field(default_factory=list)
    _arrived: threading.Condition = field(default_factory=threading.Condition)

    def __enter__(self) -> Receiver:
        state = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                arrived = time.monotonic()
                ok = verify_signature(raw, self.headers.get("X-Service-Signature", ""), state.secret)
                self.send_response(200 if ok else 400)
                self.send_header("Content-Length", "0")
                self.end_headers()
                with state._arrived:
                    state.callbacks.append(Callback(arrived, json.loads(raw or b"{}"), ok))
                    state._arrived.notify_all()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, name="callback-receiver", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/hooks/bulk"

    def wait_for(self, job_id: str, timeout: float) -> Callback | None:
        deadline = time.monotonic() + timeout
        with self._arrived:
            while True:
                for callback in self.callbacks:
                    if callback.body.get("job_id") == job_id:
                        return callback
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._arrived.wait(min(left, 1.0))
