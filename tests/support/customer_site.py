"""A customer's web site on its own loopback origin, for the form widget's browser tests: every GET
answers the same page, so a submitted form (GET) lands on it again with its fields in the URL.
And a server that never answers, for the widget's fail-open."""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class CustomerSite:
    def __init__(self, html: str) -> None:
        self.html = html
        page = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = page.html.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> CustomerSite:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


class SilentServer:
    """Accepts connections (the kernel's backlog does) and never answers a byte."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0), backlog=64)
        self.origin = f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def __enter__(self) -> SilentServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()
