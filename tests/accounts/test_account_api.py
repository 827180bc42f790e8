"""GET /v1/account: plan, balance, usage today and over 30 days, and the calling key."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import time_machine
from django.utils import timezone

from accounts.models import ApiKey
from billing.services import credits_release, credits_reserve
from tests.conftest import Persona, make_persona


def account(persona: Persona) -> Any:
    response = persona.get("/v1/account")
    assert response.status_code == 200
    return response.json()


def test_account_shows_plan_balance_and_the_calling_key(owner: Persona) -> None:
    body = account(owner)
    assert body["id"] == str(owner.account.public_id)
    assert body["plan"] == {"code": "starter", "bulk": True, "rate_per_second": 20}
    assert body["credits_remaining"] == 1000
    assert body["key"] == {"prefix": owner.api_key[:12], "scope": "full", "mode": "live", "expires_at": None}


def test_the_free_plan_has_no_bulk(db: None) -> None:
    assert account(make_persona(plan_code="free", credits=5))["plan"] == {
        "code": "free",
        "bulk": False,
        "rate_per_second": 5,
    }


def test_the_key_shown_is_the_one_calling(owner: Persona) -> None:
    _, second = ApiKey.issue(account=owner.account, name="CRM sync")
    other = Persona(account=owner.account, api_key=second, client=owner.client)
    assert account(other)["key"]["prefix"] == second[:12] != owner.api_key[:12]


def test_usage_counts_verifications_today_and_over_30_days(owner: Persona) -> None:
    with time_machine.travel(timezone.now() - timedelta(days=3)):
        owner.verify("a@good.com")
        owner.post_json("/v1/verify/batch", {"emails": ["b@good.com", "c@good.com"]})
    with time_machine.travel(timezone.now() - timedelta(days=31)):
        owner.verify("old@good.com")
    owner.verify("d@good.com")
    held, _ = credits_reserve(account=owner.account, wanted=10, reference="job_x")
    credits_release(account=owner.account, amount=held - 4, reference="job_x")
    assert account(owner)["usage"] == {"today": 5, "last_30_days": 8}


def test_account_costs_nothing(owner: Persona) -> None:
    response = owner.get("/v1/account")
    assert response["X-Credits-Remaining"] == "1000"
    assert account(owner)["credits_remaining"] == 1000


def test_account_needs_a_key(client: Any, db: None) -> None:
    response = client.get("/v1/account")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_required"


def test_a_revoked_key_cannot_read_the_account(owner: Persona) -> None:
    ApiKey.objects.get(account=owner.account).revoke()
    assert owner.get("/v1/account").status_code == 401


def test_account_shows_only_the_callers_account(owner: Persona, outsider: Persona) -> None:
    outsider.verify("a@good.com")
    assert account(owner)["id"] != account(outsider)["id"]
    assert account(owner)["usage"]["today"] == 0


def test_account_refuses_other_methods(owner: Persona) -> None:
    response = owner.post_json("/v1/account", {})
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"
