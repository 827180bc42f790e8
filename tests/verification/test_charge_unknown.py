"""Paying only for definitive answers, as the operator's choice (VERIFIER_CHARGE_UNKNOWN): by
default every verification costs one credit; set to 0, an `unknown` answer costs nothing, in single
and batch verification alike, and the key's spend caps count only what was charged."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from accounts.models import ApiKey
from billing.models import LedgerEntry
from tests.conftest import Persona
from tests.support.portal import logged_in

pytestmark = pytest.mark.usefixtures("deep_farm")

UNKNOWN = "alice@listed.deepfarm.net"  # the MX refuses us at the banner: unknown / smtp_blocked
VALID = "alice@mailbox.deepfarm.net"


@pytest.fixture
def unknowns_free(settings: Any) -> None:
    settings.VERIFIER_CHARGE_UNKNOWN = False


def deep(persona: Persona, email: str) -> Any:
    response = persona.post_json("/v1/verify", {"email": email, "validation_mode": "deep"})
    assert response.status_code == 200, response.content
    return response


def spends(persona: Persona) -> int:
    return sum(LedgerEntry.objects.filter(account=persona.account, kind="spend").values_list("amount", flat=True))


def test_by_default_an_unknown_answer_costs_a_credit(owner: Persona) -> None:
    response = deep(owner, UNKNOWN)
    assert response.json()["status"] == "unknown"
    assert response["X-Credits-Remaining"] == "999" and spends(owner) == -1


@pytest.mark.usefixtures("unknowns_free")
def test_an_unknown_answer_costs_nothing_when_unknowns_are_free(owner: Persona) -> None:
    response = deep(owner, UNKNOWN)
    assert response.json()["status"] == "unknown"
    assert response["X-Credits-Remaining"] == "1000" and spends(owner) == 0


@pytest.mark.usefixtures("unknowns_free")
def test_a_definitive_answer_still_costs_one_credit_when_unknowns_are_free(owner: Persona) -> None:
    assert deep(owner, VALID)["X-Credits-Remaining"] == "999"


@pytest.mark.usefixtures("unknowns_free")
def test_a_batch_pays_only_for_its_definitive_answers(owner: Persona) -> None:
    emails = [UNKNOWN, VALID, "nobody@mailbox.deepfarm.net"]
    response = owner.post_json("/v1/verify/batch", {"emails": emails, "validation_mode": "deep"})
    assert [r["status"] for r in response.json()["data"]] == ["unknown", "valid", "invalid"]
    assert response["X-Credits-Remaining"] == "998" and spends(owner) == -2


@pytest.mark.usefixtures("unknowns_free")
def test_a_keys_daily_cap_counts_only_what_was_charged(owner: Persona) -> None:
    ApiKey.objects.filter(account=owner.account).update(daily_cap=1)
    deep(owner, UNKNOWN)
    deep(owner, "bob@listed.deepfarm.net")
    assert deep(owner, VALID).json()["status"] == "valid"  # the two unknowns took nothing of the cap
    assert ApiKey.objects.get(account=owner.account).spent_today == 1
    refused = owner.post_json("/v1/verify", {"email": "info@mailbox.deepfarm.net", "validation_mode": "deep"})
    assert refused.json()["error"]["code"] == "key_spend_cap_reached"


@pytest.mark.parametrize("charges", [True, False])
def test_the_account_says_which_rule_applies(owner: Persona, settings: Any, charges: bool) -> None:
    settings.VERIFIER_CHARGE_UNKNOWN = charges
    assert owner.get("/v1/account").json()["charges_unknown"] is charges


@pytest.mark.parametrize("page", ["billing", "verify"])
@pytest.mark.parametrize(("charges", "words"), [(True, "“unknown” too"), (False, "“unknown” costs nothing")])
def test_the_portal_says_which_rule_applies(
    owner: Persona, settings: Any, page: str, charges: bool, words: str
) -> None:
    settings.VERIFIER_CHARGE_UNKNOWN = charges
    assert words in logged_in(owner).get(reverse(page)).content.decode()
