"""SendGrid's Signed Event Webhook and Postmark's basic-auth URL: once the account sets a verification key
or credentials, an event without them is 401 and stores nothing; with them it is authenticated, and counts
for the bounce guarantee (docs/guarantee.md)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from django.test import Client

from billing.models import LedgerEntry
from feedback.models import FeedbackEvent
from feedback.services import inbox_of, webhook_urls
from tests.conftest import Persona
from tests.support.esp_events import basic_auth, path_of, sample, sendgrid_headers, sendgrid_keys
from tests.support.portal import logged_in

ADDRESS = "jane@good.com"


@pytest.fixture
def uncapped(settings: Any) -> None:
    settings.GUARANTEE_MAX_SHARE = 1.0


def sendgrid_bounce(email: str = ADDRESS) -> bytes:
    event = {"email": email, "event": "bounce", "type": "bounce", "timestamp": int(time.time())}
    return json.dumps([event]).encode()


def postmark_bounce(email: str = ADDRESS) -> bytes:
    record = sample("postmark_bounce.json") | {"Email": email, "BouncedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ")}
    return json.dumps(record).encode()


def post(persona: Persona, provider: str, body: bytes, headers: dict[str, str] | None = None) -> Any:
    path = path_of(webhook_urls(persona.account)[provider].replace(_credentials(persona), ""))
    return Client().post(path, body, content_type="application/json", headers=headers or {})


def _credentials(persona: Persona) -> str:
    inbox = inbox_of(persona.account)
    return f"{inbox.postmark_username}:{inbox.postmark_password}@" if inbox.postmark_username else ""


def sendgrid_key_set(persona: Persona) -> Any:
    private, public = sendgrid_keys()
    response = logged_in(persona).post("/feedback/mailgun-key", {"sendgrid_verification_key": public})
    assert response.status_code == 302
    return private


def postmark_credentials_set(persona: Persona) -> None:
    credentials = {"postmark_username": "postmark", "postmark_password": "pa55-w0rd"}
    assert logged_in(persona).post("/feedback/mailgun-key", credentials).status_code == 302


def authenticated(persona: Persona) -> list[bool]:
    return list(FeedbackEvent.objects.filter(account=persona.account).values_list("authenticated", flat=True))


def refunds(persona: Persona) -> int:
    return LedgerEntry.objects.filter(account=persona.account, kind=LedgerEntry.Kind.GUARANTEE_REFUND).count()


def test_a_sendgrid_event_signed_with_the_accounts_key_is_authenticated(owner: Persona) -> None:
    private = sendgrid_key_set(owner)
    body = sendgrid_bounce()
    assert post(owner, "sendgrid", body, sendgrid_headers(private, body)).json() == {"accepted": 1, "ignored": 0}
    assert authenticated(owner) == [True]


def test_a_sendgrid_event_without_a_signature_is_401_once_a_key_is_set(owner: Persona) -> None:
    sendgrid_key_set(owner)
    response = post(owner, "sendgrid", sendgrid_bounce())
    assert (response.status_code, response.json()["error"]["code"]) == (401, "invalid_signature")
    assert authenticated(owner) == []


def test_a_sendgrid_signature_of_another_body_or_key_is_401(owner: Persona) -> None:
    private = sendgrid_key_set(owner)
    other, _ = sendgrid_keys()
    body = sendgrid_bounce()
    assert post(owner, "sendgrid", body, sendgrid_headers(private, sendgrid_bounce("x@good.com"))).status_code == 401
    assert post(owner, "sendgrid", body, sendgrid_headers(other, body)).status_code == 401
    headers = sendgrid_headers(private, body) | {"X-Twilio-Email-Event-Webhook-Timestamp": "1"}
    assert post(owner, "sendgrid", body, headers).status_code == 401
    assert authenticated(owner) == []


def test_a_sendgrid_event_without_a_key_set_is_taken_unauthenticated(owner: Persona) -> None:
    assert post(owner, "sendgrid", sendgrid_bounce()).status_code == 200
    assert authenticated(owner) == [False]


def test_a_key_that_is_not_a_p256_public_key_is_refused_by_the_form(owner: Persona) -> None:
    page = logged_in(owner).post("/feedback/mailgun-key", {"sendgrid_verification_key": "bm90IGEga2V5"}, follow=True)
    assert "Not an ECDSA P-256 public key" in page.content.decode()
    assert inbox_of(owner.account).sendgrid_verification_key == ""


def test_the_postmark_url_carries_the_credentials_the_account_chose(owner: Persona) -> None:
    postmark_credentials_set(owner)
    url = owner.get("/v1/account").json()["feedback_webhooks"]["postmark"]
    assert "://postmark:pa55-w0rd@" in url


def test_a_postmark_event_with_the_credentials_is_authenticated(owner: Persona) -> None:
    postmark_credentials_set(owner)
    assert post(owner, "postmark", postmark_bounce(), basic_auth("postmark", "pa55-w0rd")).status_code == 200
    assert authenticated(owner) == [True]


def test_a_postmark_event_without_or_with_wrong_credentials_is_401(owner: Persona) -> None:
    postmark_credentials_set(owner)
    assert post(owner, "postmark", postmark_bounce()).status_code == 401
    assert post(owner, "postmark", postmark_bounce(), basic_auth("postmark", "wrong")).status_code == 401
    assert authenticated(owner) == []


def test_only_one_postmark_credential_is_refused_by_the_form(owner: Persona) -> None:
    page = logged_in(owner).post("/feedback/mailgun-key", {"postmark_username": "postmark"}, follow=True)
    assert "Set both the Postmark username and password" in page.content.decode()
    assert inbox_of(owner.account).postmark_username == ""


def test_a_signed_sendgrid_bounce_of_a_charged_valid_answer_refunds(owner: Persona, uncapped: None) -> None:
    private = sendgrid_key_set(owner)
    assert owner.verify(ADDRESS).json()["status"] == "valid"
    body = sendgrid_bounce()
    assert post(owner, "sendgrid", body, sendgrid_headers(private, body)).status_code == 200
    assert refunds(owner) == 1


def test_an_authenticated_postmark_bounce_of_a_charged_valid_answer_refunds(owner: Persona, uncapped: None) -> None:
    postmark_credentials_set(owner)
    assert owner.verify(ADDRESS).json()["status"] == "valid"
    assert post(owner, "postmark", postmark_bounce(), basic_auth("postmark", "pa55-w0rd")).status_code == 200
    assert refunds(owner) == 1


def test_an_unauthenticated_postmark_bounce_refunds_nothing(owner: Persona, uncapped: None) -> None:
    assert owner.verify(ADDRESS).json()["status"] == "valid"
    assert post(owner, "postmark", postmark_bounce()).status_code == 200
    assert refunds(owner) == 0
