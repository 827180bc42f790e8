"""Bulk-job fixtures (a private media root, synchronous tasks, a loopback HTTP receiver), shared with the jobs
suite; and an SNS signer whose certificate a loopback server hands out (tests/feedback/test_feedback_sns.py)."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from django.test import Client
from django.utils import timezone

from feedback.models import FeedbackEvent
from feedback.services import webhook_urls
from feedback.sns import SIGNED_FIELDS, string_to_sign
from lib.address_keys import address_key
from tests.conftest import Persona
from tests.jobs.conftest import media, receiver, run_tasks  # noqa: F401
from tests.support.certs import self_signed
from tests.support.esp_events import sample


@dataclass
class SnsSigner:
    """Signs SNS messages as SNS does, with a key whose self-signed certificate `cert_url` serves."""

    key: rsa.RSAPrivateKey
    cert_url: str
    fetches: list[str] = field(default_factory=list)

    def sign(self, message: dict[str, Any], version: str = "2", key: rsa.RSAPrivateKey | None = None) -> dict[str, Any]:
        signed = message | {"SignatureVersion": version, "SigningCertURL": self.cert_url}
        algorithm = hashes.SHA1() if version == "1" else hashes.SHA256()
        data = string_to_sign(signed, SIGNED_FIELDS[signed["Type"]])
        signature = (key or self.key).sign(data, padding.PKCS1v15(), algorithm)
        return signed | {"Signature": base64.b64encode(signature).decode()}


@pytest.fixture(scope="session")
def sns_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture
def sns_signer(settings: Any, sns_key: rsa.RSAPrivateKey) -> Iterator[SnsSigner]:
    """A loopback HTTP server handing out the key's certificate; the certificate URL pattern widened to it."""
    pem = self_signed(sns_key, "sns.us-east-1.amazonaws.com")
    signer = SnsSigner(sns_key, "")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            signer.fetches.append(self.path)
            self.send_response(200)
            self.send_header("Content-Length", str(len(pem)))
            self.end_headers()
            self.wfile.write(pem)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    port = server.server_address[1]
    settings.CALLBACK_ALLOW_PRIVATE_NETWORKS = True
    settings.SNS_SIGNING_CERT_URL_PATTERN = rf"http://127\.0\.0\.1:{port}/[^?#]*\.pem"
    signer.cert_url = f"http://127.0.0.1:{port}/SimpleNotificationService-test.pem"
    yield signer
    server.shutdown()
    server.server_close()


# Three days ago: within the 365 days a report is kept (the samples' own times are from 2013-2019).
THEN = timezone.now() - timedelta(days=3)


RECENT_ISO = THEN.strftime("%Y-%m-%dT%H:%M:%SZ")


def url_path(persona: Persona, provider: str) -> str:
    return webhook_urls(persona.account)[provider].split("://", 1)[1].split("/", 1)[1].join(["/", ""])


def post(persona: Persona, provider: str, body: Any, **headers: str) -> Any:
    return Client().post(
        url_path(persona, provider), data=json.dumps(body), content_type="application/json", headers=headers
    )


def stored(persona: Persona) -> list[tuple[str, str]]:
    rows = FeedbackEvent.objects.filter(account=persona.account).order_by("outcome")
    return list(rows.values_list("address_key", "outcome"))


def keyed(rows: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(address, outcome) as stored: the address's HMAC in its place."""
    return [(address_key(email), outcome) for email, outcome in rows]


def sns(signer: SnsSigner, message: dict[str, Any]) -> dict[str, Any]:
    """The documentation's SNS envelope around `message`, signed as SNS signs (tests/feedback/conftest.py)."""
    return signer.sign(sample("sns_notification_envelope.json") | {"Message": json.dumps(message)})
