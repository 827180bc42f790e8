"""Sending services' events as they send them, for the tests of the feedback webhooks and the guarantee:
the documented samples (tests/fixtures/feedback), Mailgun's signature, and the secret URLs' paths."""

from __future__ import annotations

import base64
import copy
import hashlib
import hmac
import json
import secrets
import time
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.test import Client

from feedback.services import inbox_of, webhook_urls

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


def sendgrid_keys() -> tuple[Any, str]:
    """A P-256 key pair: the private key, and the public key as SendGrid shows it (base64 DER)."""
    private = ec.generate_private_key(ec.SECP256R1())
    der = private.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    return private, base64.b64encode(der).decode()


def sendgrid_headers(private: Any, body: bytes, timestamp: str | None = None) -> dict[str, str]:
    """The Signed Event Webhook's headers: ECDSA-SHA256 of timestamp + body, base64 DER."""
    stamp = str(int(time.time())) if timestamp is None else timestamp
    signature = private.sign(stamp.encode() + body, ec.ECDSA(hashes.SHA256()))
    return {
        "X-Twilio-Email-Event-Webhook-Signature": base64.b64encode(signature).decode(),
        "X-Twilio-Email-Event-Webhook-Timestamp": stamp,
    }


def basic_auth(username: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()}


def mailgun_key_set(account: Any) -> None:
    """The account saves MAILGUN_KEY as its Mailgun signing key."""
    inbox = inbox_of(account)
    inbox.mailgun_signing_key = MAILGUN_KEY
    inbox.save(update_fields=["mailgun_signing_key"])


def mailgun_post(account: Any, body: Any) -> Any:
    """POST a Mailgun event to the account's secret Mailgun URL."""
    return Client().post(path_of(webhook_urls(account)["mailgun"]), body, content_type="application/json")
