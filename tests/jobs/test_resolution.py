"""Unknowns resolve later: a deep single or batch verification answered `unknown` for a temporary
reason is asked again on VERIFIER_SMTP_RETRY_SCHEDULE, read at GET /v1/verifications/{id}, announced
by a signed `verification.resolved` event, and costs one credit in all (docs/deep.md)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
import time_machine
from django.urls import reverse
from django.utils import timezone
from verifier import verify_callback

from accounts.models import ApiKey
from billing.models import LedgerEntry
from lib.prune import prune_expired
from tests.conftest import Persona
from tests.jobs.conftest import Receiver, RunTasks, ledger_sum
from tests.support.mx_farm import MxFarm
from tests.support.personas import sandboxed
from tests.support.portal import logged_in
from tests.support.resolution import balance, deep, event_time, later, read
from verification.models import RetriedVerification

pytestmark = pytest.mark.usefixtures("deep_farm")

GREYLISTED = "alice@greylist.deepfarm.net"  # 450 at first; accepted once the farm's greylisting is over
NEVER_CLEARS = "alice@probegrey.deepfarm.net"  # its catch-all probe stays greylisted: unknown for ever


def test_a_greylisted_answer_is_pending_with_its_next_attempt(owner: Persona) -> None:
    body = deep(owner, GREYLISTED).json()
    assert (body["status"], body["sub_status"]) == ("unknown", "greylisted")
    found = read(owner, body["verification_id"])
    assert found.status_code == 200
    resolution = found.json()["resolution"]
    assert resolution["state"] == "pending" and resolution["attempts"] == 0
    assert resolution["next_attempt_at"] is not None
    assert found.json()["email"] == GREYLISTED


def test_only_temporary_unknowns_get_a_verification_id(owner: Persona) -> None:
    emails = [GREYLISTED, "alice@mailbox.deepfarm.net", "alice@listed.deepfarm.net"]
    response = owner.post_json("/v1/verify/batch", {"emails": emails, "validation_mode": "deep"})
    ids = ["verification_id" in result for result in response.json()["data"]]
    assert ids == [True, False, False]  # greylisted; valid; smtp_blocked (a refusal, not temporary)


def test_a_greylisted_verification_resolves_on_the_schedule_for_one_credit_and_one_event(
    owner: Persona, deep_farm: MxFarm, receiver: Receiver, run_tasks: RunTasks
) -> None:
    verification_id = deep(owner, GREYLISTED, callback_url=receiver.url).json()["verification_id"]
    with later(4, run_tasks):  # not due yet: the first retry is 5 minutes later
        assert read(owner, verification_id).json()["resolution"]["state"] == "pending"
    deep_farm.greylist_over()  # as postgrey lets the sender through after its delay
    with later(6, run_tasks):
        pass
    body = read(owner, verification_id).json()
    assert (body["status"], body["resolution"]) == (
        "valid",
        {"state": "resolved", "attempts": 1, "next_attempt_at": None},
    )
    with later(60, run_tasks):  # settled: never asked again, never announced again
        pass
    assert balance(owner) == 999 == ledger_sum(owner)
    (event,) = receiver.received
    payload = verify_callback(event.body, event.headers, owner.account.signing_secret, now=event_time(event))
    assert payload["event"] == "verification.resolved" and payload["verification_id"] == verification_id
    assert (payload["status"], payload["resolution"]["state"]) == ("valid", "resolved")


def test_the_resolved_answer_is_learnt_by_the_verdict_cache(
    owner: Persona, deep_farm: MxFarm, run_tasks: RunTasks
) -> None:
    deep(owner, GREYLISTED)
    deep_farm.greylist_over()
    with later(6, run_tasks):
        body = deep(owner, GREYLISTED).json()
    assert (body["status"], body["cached"]) == ("valid", True)


def test_asked_again_after_midnight_it_asks_the_catch_all_probe_greylisting_has_seen(
    owner: Persona, deep_farm: MxFarm, run_tasks: RunTasks
) -> None:
    # The probe's address changes with the day; a retry after midnight asking the new day's would
    # be greylisted afresh (as postgrey keys on the recipient) and stay unknown for another round.
    with time_machine.travel(datetime(2026, 11, 29, 23, 58, tzinfo=UTC), tick=True):
        verification_id = deep(owner, GREYLISTED).json()["verification_id"]
        deep_farm.greylist_over()
        with later(6, run_tasks):
            assert timezone.now().date() == date(2026, 11, 30)
    body = read(owner, verification_id).json()
    assert (body["status"], body["resolution"]["state"]) == ("valid", "resolved")


def test_with_unknowns_free_it_is_charged_when_it_resolves(
    owner: Persona, deep_farm: MxFarm, settings: Any, run_tasks: RunTasks
) -> None:
    settings.VERIFIER_CHARGE_UNKNOWN = False
    response = deep(owner, GREYLISTED)
    assert response["X-Credits-Remaining"] == "1000" and balance(owner) == 1000
    deep_farm.greylist_over()
    with later(6, run_tasks):
        pass
    assert balance(owner) == 999 == ledger_sum(owner)
    (entry,) = LedgerEntry.objects.filter(account=owner.account, kind="spend")
    assert entry.reference == response.json()["verification_id"]
    assert ApiKey.objects.get(account=owner.account).spent_day == 1  # the asking key's cap counts it then


def test_a_verification_that_never_clears_gives_up_after_the_schedule_free_when_unknowns_are_free(
    owner: Persona, settings: Any, receiver: Receiver, run_tasks: RunTasks
) -> None:
    settings.VERIFIER_CHARGE_UNKNOWN = False
    settings.VERIFIER_SMTP_RETRY_SCHEDULE = (60, 120)
    verification_id = deep(owner, NEVER_CLEARS, callback_url=receiver.url).json()["verification_id"]
    with later(1.5, run_tasks):
        assert read(owner, verification_id).json()["resolution"]["state"] == "pending"
    with later(4, run_tasks):
        pass
    body = read(owner, verification_id).json()
    assert (body["status"], body["resolution"]) == (
        "unknown",
        {"state": "gave_up", "attempts": 2, "next_attempt_at": None},
    )
    assert balance(owner) == 1000 and receiver.received == []


def test_another_accounts_key_and_a_test_key_get_404(owner: Persona, outsider: Persona) -> None:
    verification_id = deep(owner, GREYLISTED).json()["verification_id"]
    assert read(outsider, verification_id).status_code == 404
    assert read(sandboxed(owner), verification_id).status_code == 404
    assert read(owner, "ver_" + "x" * 24).json()["error"]["code"] == "not_found"
    assert read(owner, "ver_%00").status_code == 404  # never reaches the database (PostgreSQL refuses NUL)


def test_a_settled_verification_is_pruned_a_week_later(owner: Persona, settings: Any, run_tasks: RunTasks) -> None:
    settings.VERIFIER_SMTP_RETRY_SCHEDULE = (60,)
    deep(owner, NEVER_CLEARS)
    with later(2, run_tasks):
        assert RetriedVerification.objects.get().state == "gave_up"
    with time_machine.travel(timezone.now() + timedelta(days=6)):
        prune_expired()
    assert RetriedVerification.objects.count() == 1
    with time_machine.travel(timezone.now() + timedelta(days=7, minutes=3)):
        prune_expired()
    assert RetriedVerification.objects.count() == 0


def test_the_verify_page_shows_a_pending_answer_then_its_resolution(
    owner: Persona, deep_farm: MxFarm, run_tasks: RunTasks
) -> None:
    client = logged_in(owner)
    page = client.post(reverse("verify"), {"email": GREYLISTED, "validation_mode": "deep"}).content.decode()
    retried = RetriedVerification.objects.get()
    assert 'data-resolution="pending"' in page and "Asking again costs nothing more" in page
    assert f'hx-get="{reverse("verification-resolution", args=[retried.pk])}"' in page  # polled until it settles
    deep_farm.greylist_over()
    with later(6, run_tasks):
        pass
    part = client.get(reverse("verification-resolution", args=[retried.pk])).content.decode()
    assert 'data-resolution="resolved"' in part and "data-resolved-status>valid<" in part
    assert "hx-get" not in part  # settled: no more polling


def test_without_a_callback_url_the_event_goes_to_the_one_set_in_the_portal(
    owner: Persona, deep_farm: MxFarm, receiver: Receiver, run_tasks: RunTasks
) -> None:
    saved = logged_in(owner).post(reverse("signing-secret"), {"callback_url": receiver.url})
    assert saved.status_code == 302
    verification_id = deep(owner, GREYLISTED).json()["verification_id"]
    deep_farm.greylist_over()
    with later(6, run_tasks):
        pass
    (event,) = receiver.received
    assert event.json()["verification_id"] == verification_id


def test_a_callback_url_that_is_not_public_is_refused_before_anything_is_charged(owner: Persona) -> None:
    response = owner.post_json(
        "/v1/verify", {"email": GREYLISTED, "validation_mode": "deep", "callback_url": "http://10.0.0.1/x"}
    )
    assert (response.status_code, response.json()["error"]["code"]) == (400, "invalid_callback_url")
    assert balance(owner) == 1000


def test_it_is_asked_again_from_another_egress(
    owner: Persona, deep_farm: MxFarm, settings: Any, run_tasks: RunTasks
) -> None:
    settings.VERIFIER_SMTP_EGRESS = "bind:127.0.0.50,bind:127.0.0.51"
    deep(owner, GREYLISTED)
    first = sources_at(deep_farm, GREYLIST_MX)
    deep_farm.greylist_over()
    with later(6, run_tasks):
        pass
    again = sources_at(deep_farm, GREYLIST_MX) - first
    assert len(first) == 1 and len(again) == 1  # one session each, from two different source addresses


def test_an_account_pinned_to_a_region_is_asked_again_through_that_regions_egress_only(
    owner: Persona, deep_farm: MxFarm, settings: Any, run_tasks: RunTasks
) -> None:
    settings.VERIFIER_SMTP_EGRESS = "bind:127.0.0.51|region=us-east,bind:127.0.0.50|region=eu"
    owner.account.probe_region = "eu"
    owner.account.save(update_fields=["probe_region"])
    verification_id = deep(owner, GREYLISTED).json()["verification_id"]
    deep_farm.greylist_over()
    with later(6, run_tasks):
        pass
    assert owner.get(f"/v1/verifications/{verification_id}").json()["resolution"]["state"] == "resolved"
    assert sources_at(deep_farm, GREYLIST_MX) == {"127.0.0.50"}  # both sessions from the region's egress


GREYLIST_MX = "127.0.0.4"


def sources_at(farm: MxFarm, address: str) -> set[str]:
    return {source for (source, to), sessions in farm.stats.by_source.items() if to == address and sessions}


def test_nothing_is_asked_while_deep_mode_is_off(
    owner: Persona, deep_farm: MxFarm, settings: Any, run_tasks: RunTasks
) -> None:
    verification_id = deep(owner, GREYLISTED).json()["verification_id"]
    sessions = deep_farm.stats.sessions[GREYLIST_MX]
    settings.VERIFIER_DEEP_MODE = False
    with later(6, run_tasks):
        pass
    assert deep_farm.stats.sessions[GREYLIST_MX] == sessions
    assert read(owner, verification_id).json()["resolution"]["state"] == "pending"
