"""Sending services' events as they send them, for the tests of the feedback webhooks and the guarantee:
the documented samples (tests/fixtures/feedback), Mailgun's signature, and the secret URLs' paths."""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import secrets
import time
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent.parent / "fixtures" / "feedback"
MAILGUN_KEY = "key-abc123"


def sample(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def mailgun_signed(body: dict[str, Any], key: str, *, timestamp: int | None = None, token: str | None = None) -> Any:
    """Signed as Mailgun signs: now (unless told) and with a fresh token (unless told)."""
    body = copy.deepcopy(body)
    timestamp_text = str(int(time.time()) if timestamp is None else timestamp)
    token = secrets.token_hex(25) if token is None else token
    signature = hmac.new(key.encode(), (timestamp_text + token).encode(), hashlib.sha256).hexdigest()
    body["signature"] = {"timestamp": timestamp_text, "token": token, "signature": signature}
    return body


def mailgun_failure(recipient: str, at: float, *, severity: str = "permanent") -> Any:
    """Mailgun's documented `failed` event for `recipient` at Unix time `at`."""
    body = sample("mailgun_permanent_failure.json")
    body["event-data"] |= {"timestamp": at, "recipient": recipient, "severity": severity}
    return body


def path_of(url: str) -> str:
    """The path of one of an account's webhook URLs (GET /v1/account's `feedback_webhooks`)."""
    return "/" + url.split("://", 1)[1].split("/", 1)[1]
