"""POST /v1/feedback: the store's rules (what is taken, ignored or refused; idempotent; private; expiring)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.utils import timezone

from accounts.models import Account, ApiKey
from feedback.models import FeedbackEvent
from lib.address_keys import address_key
from lib.prune import prune_expired
from tests.conftest import Persona, make_persona, sandboxed

NOW = "2026-11-20T09:30:00Z"


def report(persona: Persona, *events: dict[str, object]) -> object:
    return persona.post_json("/v1/feedback", {"events": list(events)})


def test_events_are_accepted_and_stored_with_only_address_outcome_time_and_account(owner: Persona) -> None:
    response = report(owner, {"email": " Jane@Good.com ", "outcome": "hard_bounce", "occurred_at": NOW})
    assert response.status_code == 200
    assert response.json() == {"accepted": 1, "ignored": 0}
    row = FeedbackEvent.objects.get()
    assert (row.account_id, row.address_key, row.domain, row.outcome) == (
        owner.account.pk,
        address_key("jane@good.com"),
        "good.com",
        "hard_bounce",
    )
    assert row.occurred_at.isoformat() == "2026-11-20T09:30:00+00:00"


def test_feedback_is_free(owner: Persona) -> None:
    response = report(owner, {"email": "jane@good.com", "outcome": "delivered"})
    assert response["X-Credits-Remaining"] == "1000"


def test_the_same_event_twice_is_stored_once(owner: Persona) -> None:
    event = {"email": "jane@good.com", "outcome": "delivered", "occurred_at": NOW}
    assert report(owner, event, event).json() == {"accepted": 2, "ignored": 0}
    assert report(owner, event).json() == {"accepted": 1, "ignored": 0}
    assert FeedbackEvent.objects.count() == 1


def test_the_same_event_at_another_time_or_outcome_is_another_event(owner: Persona) -> None:
    report(
        owner,
        {"email": "jane@good.com", "outcome": "delivered", "occurred_at": NOW},
        {"email": "jane@good.com", "outcome": "delivered", "occurred_at": "2026-11-20T09:31:00Z"},
        {"email": "jane@good.com", "outcome": "complaint", "occurred_at": NOW},
    )
    assert FeedbackEvent.objects.count() == 3


def test_unparsable_addresses_and_times_out_of_the_window_are_ignored(owner: Persona) -> None:
    now = timezone.now()
    response = report(
        owner,
        {"email": "not an address", "outcome": "delivered"},
        {"email": "jane@good.com", "outcome": "delivered", "occurred_at": (now + timedelta(hours=1)).isoformat()},
        {"email": "jane@good.com", "outcome": "delivered", "occurred_at": (now - timedelta(days=366)).isoformat()},
        {"email": "kept@good.com", "outcome": "soft_bounce", "occurred_at": (now - timedelta(days=364)).isoformat()},
    )
    assert response.json() == {"accepted": 1, "ignored": 3}
    assert list(FeedbackEvent.objects.values_list("address_key", flat=True)) == [address_key("kept@good.com")]


def test_an_unknown_outcome_refuses_the_whole_body_and_stores_nothing(owner: Persona) -> None:
    response = report(
        owner, {"email": "a@good.com", "outcome": "delivered"}, {"email": "b@good.com", "outcome": "opened"}
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["param"]) == ("invalid_request", "events")
    assert "events[1].outcome" in error["message"]
    assert not FeedbackEvent.objects.exists()


@pytest.mark.parametrize(
    "moment",
    [
        "2026-11-20T09:30:00",  # no offset
        "0001-01-01T00:30:00+01:00",  # past the calendar's edge once in UTC
        "9999-12-31T23:30:00-01:00",
        "2026-W47-5T09:30:00Z",  # an ISO week date
        "2026-324T09:30:00Z",  # an ordinal date
        "2026-11-20T09:30:00Z\x00",  # a trailing NUL
        "2026-11-20 09:30:00Z",
        "2026-11-20T09:30:00Z\n",
        "20261120T093000Z",
        1763631000,
        ["2026-11-20T09:30:00Z"],
    ],
    ids=repr,
)
def test_a_time_that_is_not_rfc_3339_is_ignored_and_counted(owner: Persona, moment: Any) -> None:
    response = report(owner, {"email": "a@good.com", "outcome": "delivered", "occurred_at": moment})
    assert response.status_code == 200
    assert response.json() == {"accepted": 0, "ignored": 1}
    assert not FeedbackEvent.objects.exists()


def test_events_must_be_a_list_of_1_to_1000_objects(owner: Persona) -> None:
    one = {"email": "a@good.com", "outcome": "delivered"}
    for body in (
        {},
        {"events": []},
        {"events": [one] * 1001},
        {"events": "a@good.com"},
        {"events": ["a@good.com"]},
        [],
    ):
        response = owner.post_json("/v1/feedback", body)
        assert response.status_code == 400, body
        assert response.json()["error"]["code"] == "invalid_request"
    assert report(owner, *[one] * 1000).json() == {"accepted": 1000, "ignored": 0}


def test_a_read_key_may_not_report(owner: Persona) -> None:
    _, raw = ApiKey.issue(account=owner.account, name="reader", scope=ApiKey.Scope.READ)
    response = Persona(owner.account, raw, owner.client).post_json(
        "/v1/feedback", {"events": [{"email": "a@good.com", "outcome": "delivered"}]}
    )
    assert response.status_code == 403
    assert not FeedbackEvent.objects.exists()


def test_a_verify_key_may_report(owner: Persona) -> None:
    _, raw = ApiKey.issue(account=owner.account, name="sender", scope=ApiKey.Scope.VERIFY)
    response = Persona(owner.account, raw, owner.client).post_json(
        "/v1/feedback", {"events": [{"email": "a@good.com", "outcome": "delivered"}]}
    )
    assert response.json() == {"accepted": 1, "ignored": 0}


def test_a_test_key_is_answered_but_nothing_is_stored(owner: Persona) -> None:
    response = report(
        sandboxed(owner), {"email": "a@good.com", "outcome": "hard_bounce"}, {"email": "x", "outcome": "delivered"}
    )
    assert response.json() == {"accepted": 1, "ignored": 1}
    assert not FeedbackEvent.objects.exists()


def test_events_expire_365_days_after_they_happened_and_are_pruned(owner: Persona) -> None:
    report(owner, {"email": "a@good.com", "outcome": "delivered", "occurred_at": timezone.now().isoformat()})
    with time_machine.travel(timezone.now() + timedelta(days=364)):
        prune_expired()
        assert FeedbackEvent.objects.count() == 1
    with time_machine.travel(timezone.now() + timedelta(days=366)):
        assert prune_expired()["FeedbackEvent"] == 1
    assert not FeedbackEvent.objects.exists()


def test_events_are_deleted_with_the_account(outsider: Persona) -> None:
    # An account with ledger entries is never deleted (it is deactivated); one without any can be.
    unpaid = make_persona(plan_code="starter", credits=0)
    report(unpaid, {"email": "a@good.com", "outcome": "delivered"})
    report(outsider, {"email": "a@good.com", "outcome": "delivered"})
    Account.objects.filter(pk=unpaid.account.pk).delete()
    assert list(FeedbackEvent.objects.values_list("account_id", flat=True)) == [outsider.account.pk]


def test_one_accounts_events_are_its_own(owner: Persona, outsider: Persona) -> None:
    report(owner, {"email": "a@good.com", "outcome": "delivered", "occurred_at": NOW})
    report(outsider, {"email": "a@good.com", "outcome": "delivered", "occurred_at": NOW})
    assert FeedbackEvent.objects.filter(address_key=address_key("a@good.com")).count() == 2
