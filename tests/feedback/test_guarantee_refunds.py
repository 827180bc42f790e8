"""The bounce guarantee: a charged valid, high-confidence answer that hard-bounces for the same account
within 30 days, by an authenticated event of its sending service, is credited back once (docs/guarantee.md)."""

from __future__ import annotations

import json
import time
from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.utils import timezone

from accounts.models import Account
from billing.models import GuaranteeRefund, LedgerEntry
from feedback.services import webhook_urls
from tests.conftest import Persona, sandboxed
from tests.feedback.conftest import SnsSigner
from tests.support.db import committed_db
from tests.support.esp_events import MAILGUN_KEY, mailgun_failure, mailgun_key_set, mailgun_signed, path_of, sample
from tests.support.esp_events import mailgun_post as post_to_mailgun
from tests.support.threads import run_at_once

ADDRESS = "jane@good.com"


@pytest.fixture
def uncapped(settings: Any) -> None:
    settings.GUARANTEE_MAX_SHARE = 1.0


def signing_key_set(persona: Persona) -> None:
    mailgun_key_set(persona.account)


def mailgun_post(persona: Persona, body: Any) -> Any:
    return post_to_mailgun(persona.account, body)


def signed_bounce(persona: Persona, email: str = ADDRESS, *, hours_ago: float = 0) -> Any:
    return mailgun_post(persona, mailgun_signed(mailgun_failure(email, time.time() - hours_ago * 3600), MAILGUN_KEY))


def balance(persona: Persona) -> int:
    return Account.objects.get(pk=persona.account.pk).credit_balance


def refunds(persona: Persona) -> list[int]:
    entries = LedgerEntry.objects.filter(account=persona.account, kind=LedgerEntry.Kind.GUARANTEE_REFUND)
    return list(entries.values_list("amount", flat=True))


def answered_valid(persona: Persona, email: str = ADDRESS) -> None:
    body = persona.verify(email).json()
    assert (body["status"], body["confidence"]) == ("valid", "high")


def test_a_signed_mailgun_permanent_failure_of_a_charged_valid_answer_refunds_one_credit(
    owner: Persona, uncapped: None
) -> None:
    signing_key_set(owner)
    answered_valid(owner)
    before = balance(owner)
    assert signed_bounce(owner).json() == {"accepted": 1, "ignored": 0}
    assert balance(owner) == before + 1
    assert refunds(owner) == [1]


def test_the_same_bounce_delivered_again_refunds_nothing_more(owner: Persona, uncapped: None) -> None:
    signing_key_set(owner)
    answered_valid(owner)
    body = mailgun_failure(ADDRESS, time.time())
    for _ in range(3):  # each delivery freshly signed, as a sending service's retries are
        assert mailgun_post(owner, mailgun_signed(body, MAILGUN_KEY)).status_code == 200
    assert refunds(owner) == [1]


def test_a_temporary_failure_refunds_nothing(owner: Persona, uncapped: None) -> None:
    signing_key_set(owner)
    answered_valid(owner)
    body = mailgun_failure(ADDRESS, time.time(), severity="temporary")
    assert mailgun_post(owner, mailgun_signed(body, MAILGUN_KEY)).status_code == 200
    assert refunds(owner) == []


def test_an_unsigned_mailgun_bounce_refunds_nothing(owner: Persona, uncapped: None) -> None:
    answered_valid(owner)
    assert mailgun_post(owner, mailgun_failure(ADDRESS, time.time())).json()["accepted"] == 1
    assert refunds(owner) == []


def test_a_self_reported_bounce_refunds_nothing(owner: Persona, uncapped: None) -> None:
    answered_valid(owner)
    event = {"email": ADDRESS, "outcome": "hard_bounce"}
    assert owner.post_json("/v1/feedback", {"events": [event]}).json()["accepted"] == 1
    assert refunds(owner) == []


def test_an_answer_older_than_30_days_is_not_refunded(owner: Persona, uncapped: None) -> None:
    signing_key_set(owner)
    with time_machine.travel(timezone.now() - timedelta(days=31)):
        answered_valid(owner)
    assert signed_bounce(owner).status_code == 200
    assert refunds(owner) == []


def test_an_answer_29_days_old_is_refunded(owner: Persona, uncapped: None) -> None:
    signing_key_set(owner)
    with time_machine.travel(timezone.now() - timedelta(days=29)):
        answered_valid(owner)
    assert signed_bounce(owner).status_code == 200
    assert refunds(owner) == [1]


def test_an_invalid_answer_is_not_refunded(owner: Persona, uncapped: None) -> None:
    signing_key_set(owner)
    assert owner.verify("jane@nullmx.com").json()["status"] == "invalid"
    assert signed_bounce(owner, "jane@nullmx.com").status_code == 200
    assert refunds(owner) == []


def test_a_test_keys_answer_was_never_charged_and_is_not_refunded(owner: Persona, uncapped: None) -> None:
    signing_key_set(owner)
    assert sandboxed(owner).verify(ADDRESS).json()["status"] == "valid"
    assert signed_bounce(owner).status_code == 200
    assert refunds(owner) == []


def test_another_accounts_answer_is_not_refunded_by_this_accounts_bounce(
    owner: Persona, outsider: Persona, uncapped: None
) -> None:
    signing_key_set(outsider)
    answered_valid(owner)
    assert signed_bounce(outsider).status_code == 200
    assert refunds(owner) == [] == refunds(outsider)


def test_ses_bounce_through_a_verified_sns_signature_refunds(
    owner: Persona, sns_signer: SnsSigner, uncapped: None
) -> None:
    answered_valid(owner)
    message = sample("ses_bounce_message.json")
    message["bounce"]["timestamp"] = timezone.now().isoformat()
    message["bounce"]["bouncedRecipients"] = [{"emailAddress": ADDRESS}]
    envelope = sample("sns_notification_envelope.json") | {"Message": json.dumps(message)}
    path = path_of(webhook_urls(owner.account)["ses"])
    response = Client().post(path, sns_signer.sign(envelope), content_type="application/json")
    assert response.status_code == 200
    assert refunds(owner) == [1]


def test_refunds_past_the_months_cap_are_recorded_not_credited(owner: Persona) -> None:
    signing_key_set(owner)  # the default cap: 5 % of the month's valid answers, rounded down
    emails = [f"person{n}@good.com" for n in range(40)]
    assert owner.post_json("/v1/verify/batch", {"emails": emails}).status_code == 200
    for email in emails[:3]:
        assert signed_bounce(owner, email).status_code == 200
    assert refunds(owner) == [1, 1]
    assert list(GuaranteeRefund.objects.order_by("id").values_list("credited", flat=True)) == [True, True, False]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent deliveries need PostgreSQL's row locks")
@committed_db
def test_twenty_parallel_deliveries_of_one_bounce_refund_once_on_postgresql(owner: Persona, settings: Any) -> None:
    settings.GUARANTEE_MAX_SHARE = 1.0
    signing_key_set(owner)
    answered_valid(owner)
    body = mailgun_signed(mailgun_failure(ADDRESS, time.time()), MAILGUN_KEY)
    statuses = run_at_once(20, lambda: mailgun_post(owner, body).status_code)
    assert sorted(set(statuses)) == [200, 401]  # the one signature again is a replay for all but one
    assert refunds(owner) == [1]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent deliveries need PostgreSQL's row locks")
@committed_db
def test_twenty_parallel_differently_signed_deliveries_refund_once_on_postgresql(owner: Persona, settings: Any) -> None:
    settings.GUARANTEE_MAX_SHARE = 1.0
    signing_key_set(owner)
    answered_valid(owner)
    event = mailgun_failure(ADDRESS, time.time())
    bodies = iter([mailgun_signed(event, MAILGUN_KEY) for _ in range(20)])
    statuses = run_at_once(20, lambda: mailgun_post(owner, next(bodies)).status_code)
    assert statuses == [200] * 20
    assert refunds(owner) == [1]
    assert balance(owner) == 1000


@pytest.mark.usefixtures("media")
def test_a_bulk_jobs_charged_valid_row_is_refunded_too(owner: Persona, uncapped: None, run_tasks: Any) -> None:
    signing_key_set(owner)
    upload = SimpleUploadedFile("list.csv", f"{ADDRESS}\njane@nullmx.com\n".encode(), "text/csv")
    with run_tasks():
        response = owner.client.post("/v1/verify/bulk", data={"file": upload}, headers=owner.auth({}))
    assert owner.get(f"/v1/jobs/{response.json()['id']}").json()["progress"]["valid"] == 1
    assert signed_bounce(owner).status_code == 200
    assert signed_bounce(owner, "jane@nullmx.com").status_code == 200
    assert refunds(owner) == [1]


def test_get_account_shows_this_months_valid_answers_bounces_refunds_and_rates_by_provider(
    owner: Persona, uncapped: None
) -> None:
    signing_key_set(owner)
    answered_valid(owner)  # good.com: `other`
    answered_valid(owner, "someone@gmail.com")
    event = {"email": "someone@gmail.com", "outcome": "hard_bounce"}
    assert owner.post_json("/v1/feedback", {"events": [event]}).json()["accepted"] == 1  # self-reported: counted
    assert signed_bounce(owner).status_code == 200
    guarantee = owner.get("/v1/account").json()["guarantee"]
    assert guarantee["month"] == f"{timezone.now():%Y-%m}"
    assert (guarantee["valid_answers"], guarantee["bounced"], guarantee["refunded"]) == (2, 2, 1)
    assert (guarantee["cap"], guarantee["max_share"], guarantee["refunds_over_cap"]) == (2, 1.0, 0)
    rates = guarantee["bounce_rate_by_provider"]
    assert rates["google"] == {"valid": 1, "bounced": 1, "rate": 1.0}
    assert rates["other"] == {"valid": 1, "bounced": 1, "rate": 1.0}
    assert rates["microsoft"] == {"valid": 0, "bounced": 0, "rate": None}


def test_another_accounts_answers_are_not_in_this_accounts_guarantee(owner: Persona, outsider: Persona) -> None:
    answered_valid(outsider)
    assert owner.get("/v1/account").json()["guarantee"]["valid_answers"] == 0
