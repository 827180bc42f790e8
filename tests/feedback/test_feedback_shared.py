"""A hard bounce counts for every account only when two accounts with no member in common reported it
within 30 days: one customer, or one person in several accounts, cannot poison another's verdicts."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.utils import timezone

from accounts.models import Membership, Role
from tests.conftest import Persona, make_persona


def bounce(persona: Persona, email: str, days_ago: float = 1) -> None:
    when = (timezone.now() - timedelta(days=days_ago)).isoformat()
    event = {"email": email, "outcome": "hard_bounce", "occurred_at": when}
    assert persona.post_json("/v1/feedback", {"events": [event]}).json()["accepted"] == 1


def status_of(persona: Persona, email: str) -> tuple[Any, Any]:
    body = persona.verify(email).json()
    return body["status"], (body["feedback"] or {}).get("outcome")


def test_two_unrelated_accounts_bouncing_an_address_make_it_invalid_for_everyone(
    owner: Persona, outsider: Persona
) -> None:
    third = make_persona(plan_code="starter")
    bounce(owner, "jane@good.com")
    assert status_of(third, "jane@good.com") == ("valid", None)
    bounce(outsider, "jane@good.com")
    assert status_of(third, "jane@good.com") == ("invalid", "hard_bounce")


def test_one_account_reporting_many_times_is_still_one_account(owner: Persona) -> None:
    third = make_persona(plan_code="starter")
    for days in (1, 2, 3):
        bounce(owner, "jane@good.com", days)
    assert status_of(third, "jane@good.com") == ("valid", None)


def test_accounts_sharing_a_member_count_as_one(owner: Persona, outsider: Persona) -> None:
    Membership.objects.create(account=outsider.account, user=owner.account.owner, role=Role.ADMIN)
    third = make_persona(plan_code="starter")
    bounce(owner, "jane@good.com")
    bounce(outsider, "jane@good.com")
    assert status_of(third, "jane@good.com") == ("valid", None)


def test_bounces_older_than_30_days_do_not_count_for_others(owner: Persona, outsider: Persona) -> None:
    third = make_persona(plan_code="starter")
    bounce(owner, "jane@good.com", days_ago=31)
    bounce(outsider, "jane@good.com", days_ago=2)
    assert status_of(third, "jane@good.com") == ("valid", None)
    assert status_of(owner, "jane@good.com") == ("invalid", "hard_bounce")  # its own, within 90 days


def test_an_accounts_own_later_delivery_outweighs_a_shared_bounce(owner: Persona, outsider: Persona) -> None:
    third = make_persona(plan_code="starter")
    bounce(owner, "jane@good.com", 3)
    bounce(outsider, "jane@good.com", 3)
    event = {"email": "jane@good.com", "outcome": "delivered"}
    third.post_json("/v1/feedback", {"events": [event]})
    assert status_of(third, "jane@good.com") == ("valid", "delivered")
