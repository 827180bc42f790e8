"""LOG_FORMAT=json: one JSON object per line, with the request's id, account id and timing.

Never an API key, a signing secret or an address in full: every message is redacted on its way
out (`redact`), whoever logged it.
"""

from __future__ import annotations

import json
import logging
import re
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from django.conf import settings

# What the current request has told us so far (request_id, then account_id once authenticated).
_context: ContextVar[dict[str, Any] | None] = ContextVar("log_context", default=None)
_ADDRESS = re.compile(r"([^\s@\"'<>,;:]{1,64})@([A-Za-z0-9.-]+\.[A-Za-z]{2,})")
_SECRET = re.compile(r"\b(ev_live_|whsec_)([A-Za-z0-9]{4})[A-Za-z0-9]*")
requests_logger = logging.getLogger("verifier.requests")


def bind(**fields: Any) -> None:
    _context.set({**(_context.get() or {}), **fields})


def clear() -> None:
    _context.set(None)


def redact(text: str) -> str:
    """`jane.doe@example.com` → `j***@example.com`; `ev_live_AbCd…` → `ev_live_AbCd…` cut after 4 characters."""
    text = _ADDRESS.sub(lambda m: f"{m.group(1)[0]}***@{m.group(2)}", text)
    return _SECRET.sub(lambda m: f"{m.group(1)}{m.group(2)}…", text)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": redact(record.getMessage()),
            **(_context.get() or {}),
            **getattr(record, "fields", {}),
        }
        if record.exc_info:
            entry["exception"] = redact(self.formatException(record.exc_info))
        return json.dumps(entry, default=str)


def request_logged(*, method: str, path: str, view: str, status: int, seconds: float, account_id: int | None) -> None:
    """The access line, with LOG_FORMAT=json only (gunicorn logs plain access lines of its own if asked)."""
    if settings.LOG_FORMAT != "json":
        return
    fields = {"method": method, "path": path, "view": view, "status": status, "duration_ms": round(seconds * 1000, 1)}
    requests_logger.info("%s %s %s", method, path, status, extra={"fields": {**fields, "account_id": account_id}})


class NoStaticRequests(logging.Filter):
    """Drops the development server's lines for static files that were served (`make run`): a page's
    CSS and scripts, not what anyone reads the terminal for."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name != "django.server" or record.levelno > logging.INFO:
            return True
        line = str(record.args[0]) if isinstance(record.args, tuple) and record.args else ""  # "GET /path HTTP/1.1"
        return " /static/" not in line
