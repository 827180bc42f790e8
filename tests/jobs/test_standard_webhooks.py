"""Callbacks carry Standard Webhooks headers that the `standardwebhooks` package itself accepts."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.utils import timezone
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from docs.verify_signature import verify_signature
from jobs.models import CallbackDelivery
from tests.conftest import Persona
from tests.jobs.conftest import Receiver, RunTasks, upload

STANDARD_HEADERS = ("webhook-id", "webhook-timestamp", "webhook-signature")


def standard_headers(received: Any) -> dict[str, str]:
    return {name: received.headers[name] for name in STANDARD_HEADERS}


def test_the_standard_webhooks_verifier_accepts_a_callback(
    owner: Persona, receiver: Receiver, run_tasks: RunTasks
) -> None:
    with run_tasks():
        job_id = upload(owner, b"a@good.com\n", callback_url=receiver.url).json()["id"]
    (received,) = receiver.received
    payload = Webhook(owner.account.signing_secret).verify(received.body, standard_headers(received))
    assert payload["job_id"] == job_id
    assert received.headers["webhook-id"] == CallbackDelivery.objects.get().event_id == payload["event_id"]


def test_our_own_signature_stays_beside_it(owner: Persona, receiver: Receiver, run_tasks: RunTasks) -> None:
    with run_tasks():
        upload(owner, b"a@good.com\n", callback_url=receiver.url)
    (received,) = receiver.received
    assert verify_signature(received.body, received.headers["X-Service-Signature"], owner.account.signing_secret)
    assert received.headers["X-Service-Event-Id"] == received.headers["webhook-id"]


def test_another_accounts_secret_is_refused(
    owner: Persona, outsider: Persona, receiver: Receiver, run_tasks: RunTasks
) -> None:
    with run_tasks():
        upload(owner, b"a@good.com\n", callback_url=receiver.url)
    (received,) = receiver.received
    with pytest.raises(WebhookVerificationError):
        Webhook(outsider.account.signing_secret).verify(received.body, standard_headers(received))


def test_a_tampered_body_is_refused(owner: Persona, receiver: Receiver, run_tasks: RunTasks) -> None:
    with run_tasks():
        upload(owner, b"a@good.com\n", callback_url=receiver.url)
    (received,) = receiver.received
    with pytest.raises(WebhookVerificationError):
        Webhook(owner.account.signing_secret).verify(received.body.replace(b"1", b"2"), standard_headers(received))


def test_during_a_rotation_both_secrets_verify(owner: Persona, receiver: Receiver, run_tasks: RunTasks) -> None:
    old = owner.account.signing_secret
    owner.account.rotate_signing_secret()
    with run_tasks():
        upload(owner, b"a@good.com\n", callback_url=receiver.url)
    (received,) = receiver.received
    assert len(received.headers["webhook-signature"].split(" ")) == 2
    for secret in (owner.account.signing_secret, old):
        Webhook(secret).verify(received.body, standard_headers(received))


def test_a_day_after_a_rotation_only_the_new_secret_signs(
    owner: Persona, receiver: Receiver, run_tasks: RunTasks
) -> None:
    old = owner.account.signing_secret
    with time_machine.travel(timezone.now() - timedelta(hours=25)):
        owner.account.rotate_signing_secret()
    with run_tasks():
        upload(owner, b"a@good.com\n", callback_url=receiver.url)
    (received,) = receiver.received
    assert " " not in received.headers["webhook-signature"]
    Webhook(owner.account.signing_secret).verify(received.body, standard_headers(received))
    with pytest.raises(WebhookVerificationError):
        Webhook(old).verify(received.body, standard_headers(received))


def test_a_retry_is_signed_with_its_own_time_and_the_same_id(
    owner: Persona, settings: Any, receiver: Receiver, run_tasks: RunTasks
) -> None:
    from tests.jobs.conftest import run_due_schedules

    receiver.statuses = [500, 200]
    with run_tasks():
        upload(owner, b"a@good.com\n", callback_url=receiver.url)
    with time_machine.travel(timezone.now() + timedelta(hours=1)):
        assert run_due_schedules() == 1
        first, retry = receiver.received
        Webhook(owner.account.signing_secret).verify(retry.body, standard_headers(retry))
        with pytest.raises(WebhookVerificationError):  # outside the verifier's 5-minute tolerance
            Webhook(owner.account.signing_secret).verify(first.body, standard_headers(first))
    assert first.headers["webhook-id"] == retry.headers["webhook-id"]
