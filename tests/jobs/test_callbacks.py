"""Signed callbacks to a real HTTP server on loopback, with retries scheduled in django-q2."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import time_machine
from django.utils import timezone
from django_q.models import OrmQ

from docs.verify_signature import verify_signature
from jobs import tasks
from jobs.callbacks import retry_delay
from jobs.models import CallbackAttempt, CallbackDelivery
from tests.conftest import Persona
from tests.jobs.conftest import Receiver, RunTasks, run_due_schedules, run_schedules_as_they_fall_due, upload


def test_callback_is_retried_until_2xx_with_one_event_id(
    owner: Persona, settings: Any, receiver: Receiver, run_tasks: RunTasks
) -> None:
    settings.CALLBACK_RETRY_BASE_SECONDS = 0.01
    receiver.statuses = [500, 500, 200]
    with run_tasks():
        content = b"a@good.com\ninfo@good.com\nx@silent.com\nx@nullmx.com\n"
        job_id = upload(owner, content, callback_url=receiver.url).json()["id"]
    run_schedules_as_they_fall_due()
    delivery = CallbackDelivery.objects.get(job_id=job_id)
    attempts = list(CallbackAttempt.objects.filter(delivery=delivery).values_list("number", "status_code"))
    assert attempts == [(1, 500), (2, 500), (3, 200)]
    assert delivery.state == "delivered"
    assert {r.headers["X-Service-Event-Id"] for r in receiver.received} == {delivery.event_id}
    secret = owner.account.signing_secret
    for received in receiver.received:
        assert received.headers["Content-Type"] == "application/json"
        assert verify_signature(received.body, received.headers["X-Service-Signature"], secret)
    assert receiver.received[-1].json() == {
        "event": "bulk.completed",
        "job_id": job_id,
        "status": "completed",
        "partial": False,
        "total": 4,
        "processed": 4,
        "valid": 1,
        "invalid": 1,
        "risky": 1,
        "unknown": 1,
        "result_url": receiver.received[-1].json()["result_url"],
        "event_id": delivery.event_id,
    }
    assert receiver.received[-1].json()["result_url"].startswith("http://testserver/v1/results/")


def test_retry_delays_grow_from_30_seconds_to_about_two_hours() -> None:
    delays = [retry_delay(n).total_seconds() for n in range(1, 6)]
    assert delays == [30, 120, 480, 1920, 7680]


def test_six_failed_attempts_give_up(owner: Persona, settings: Any, receiver: Receiver, run_tasks: RunTasks) -> None:
    settings.CALLBACK_RETRY_BASE_SECONDS = 0.01
    receiver.statuses = [503] * 10
    with run_tasks():
        upload(owner, b"a@good.com\n", callback_url=receiver.url)
    run_schedules_as_they_fall_due()
    delivery = CallbackDelivery.objects.get()
    assert (delivery.state, delivery.attempts, len(receiver.received)) == ("failed", 6, 6)


def test_a_retry_an_hour_later_is_signed_with_its_own_time(
    owner: Persona, receiver: Receiver, run_tasks: RunTasks
) -> None:
    receiver.statuses = [500, 200]
    with run_tasks():
        upload(owner, b"a@good.com\n", callback_url=receiver.url)
    later = timezone.now() + timedelta(hours=1)
    with time_machine.travel(later):
        assert run_due_schedules() == 1
        assert verify_signature(
            receiver.received[1].body, receiver.received[1].headers["X-Service-Signature"], owner.account.signing_secret
        )
    first_t = int(receiver.received[0].headers["X-Service-Signature"].split(",")[0][2:])
    assert abs(first_t - time.time()) < 60
    assert not verify_signature(
        receiver.received[0].body,
        receiver.received[0].headers["X-Service-Signature"],
        owner.account.signing_secret,
        now=later.timestamp(),
    )


def test_after_rotation_callbacks_carry_both_signatures(
    owner: Persona, receiver: Receiver, run_tasks: RunTasks
) -> None:
    old = owner.account.signing_secret
    owner.account.rotate_signing_secret()
    with run_tasks():
        upload(owner, b"a@good.com\n", callback_url=receiver.url)
    (received,) = receiver.received
    header = received.headers["X-Service-Signature"]
    assert header.count("v1=") == 2
    assert verify_signature(received.body, header, owner.account.signing_secret)
    assert verify_signature(received.body, header, old)


def test_delivery_to_an_address_that_turned_private_is_refused_without_retry(
    owner: Persona, settings: Any, receiver: Receiver, run_tasks: RunTasks
) -> None:
    with run_tasks():
        upload(owner, b"a@good.com\n", callback_url=receiver.url)
    receiver.received.clear()
    delivery = CallbackDelivery.objects.get()
    CallbackDelivery.objects.filter(pk=delivery.pk).update(state="pending", attempts=1)
    settings.CALLBACK_ALLOW_PRIVATE_NETWORKS = False
    tasks.deliver_callback(delivery.pk)
    delivery.refresh_from_db()
    assert delivery.state == "failed"
    assert receiver.received == []
    assert CallbackAttempt.objects.get(delivery=delivery, number=2).error.startswith("Refused:")


def test_the_worker_completing_a_job_sends_its_callback_at_once(
    owner: Persona, receiver: Receiver, django_capture_on_commit_callbacks: Any
) -> None:
    # django-q2 as in production: what is queued waits in the broker, as behind other customers' bulk tasks.
    with django_capture_on_commit_callbacks(execute=True):
        job_id = upload(owner, b"a@good.com\n", callback_url=receiver.url).json()["id"]
    with django_capture_on_commit_callbacks(execute=True):
        tasks.run_next_chunk()
    assert [r.json()["event"] for r in receiver.received] == ["bulk.completed"]
    delivery = CallbackDelivery.objects.get(job_id=job_id)
    queued = [task for task in OrmQ.objects.all() if task.func() == "jobs.tasks.deliver_callback"]
    assert [task.args() for task in queued] == [(delivery.pk, 1)]  # the safety net, should the worker die first
    tasks.deliver_callback(*queued[0].args())  # run later, it finds attempt 1 made
    assert len(receiver.received) == 1
    assert list(CallbackAttempt.objects.filter(delivery=delivery).values_list("number", "status_code")) == [(1, 200)]


def test_a_callback_url_with_a_non_ascii_path_is_stored_and_called_percent_encoded(
    owner: Persona, receiver: Receiver, run_tasks: RunTasks
) -> None:
    with run_tasks():
        response = upload(owner, b"a@good.com\n", callback_url=receiver.url + "/café?name=Zoë")
    assert response.status_code == 202
    delivery = CallbackDelivery.objects.get()
    assert delivery.url == receiver.url + "/caf%C3%A9?name=Zo%C3%AB"
    assert delivery.state == "delivered"
    assert [r.path for r in receiver.received] == ["/hooks/bulk/caf%C3%A9?name=Zo%C3%AB"]


def a_stored_delivery(owner: Persona, receiver: Receiver, run_tasks: RunTasks, url: str) -> CallbackDelivery:
    """A delivery whose URL was stored by an older version (before submission refused or encoded it)."""
    with run_tasks():
        upload(owner, b"a@good.com\n", callback_url=receiver.url)
    receiver.received.clear()
    CallbackDelivery.objects.update(state="pending", attempts=1, url=url)  # attempt 1 was delivered
    return CallbackDelivery.objects.get()


def test_a_stored_non_ascii_url_is_delivered_percent_encoded(
    owner: Persona, receiver: Receiver, run_tasks: RunTasks
) -> None:
    delivery = a_stored_delivery(owner, receiver, run_tasks, receiver.url + "/café")
    tasks.deliver_callback(delivery.pk)
    delivery.refresh_from_db()
    assert delivery.state == "delivered"
    assert [r.path for r in receiver.received] == ["/hooks/bulk/caf%C3%A9"]


def test_a_stored_url_that_cannot_be_parsed_ends_in_a_recorded_failed_attempt(
    owner: Persona, receiver: Receiver, run_tasks: RunTasks
) -> None:
    delivery = a_stored_delivery(owner, receiver, run_tasks, "http://[::1")
    tasks.deliver_callback(delivery.pk)
    delivery.refresh_from_db()
    assert delivery.state == "failed"
    attempt = CallbackAttempt.objects.get(delivery=delivery, number=2)
    assert attempt.error == "Refused: The URL is not a valid URL."
