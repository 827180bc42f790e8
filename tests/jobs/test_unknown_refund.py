"""Paying only for definitive answers (VERIFIER_CHARGE_UNKNOWN=0): a bulk job's rows that end
`unknown` are credited back once, when the job completes, in one ledger entry (README, "What a
customer pays")."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from billing.models import LedgerEntry
from jobs.lifecycle import job_complete_if_done
from jobs.models import Job
from tests.conftest import Persona
from tests.jobs.conftest import RunTasks, ledger_sum
from tests.support.portal import logged_in

pytestmark = pytest.mark.usefixtures("deep_farm")

# Two definitive rows (valid, invalid) and two that end unknown (the MX refuses us at the banner).
ROWS = [
    "alice@mailbox.deepfarm.net",
    "nobody@mailbox.deepfarm.net",
    "alice@listed.deepfarm.net",
    "bob@listed.deepfarm.net",
]


def deep_job(persona: Persona, run_tasks: RunTasks) -> str:
    data = {"file": SimpleUploadedFile("list.csv", "\n".join(ROWS).encode(), "text/csv"), "validation_mode": "deep"}
    with run_tasks():
        response = persona.client.post("/v1/verify/bulk", data=data, headers=persona.auth({}))
    assert response.status_code == 202, response.content
    return str(response.json()["id"])


def job_net(persona: Persona, job_id: str) -> int:
    entries = LedgerEntry.objects.filter(account=persona.account, reference__startswith=job_id)
    return sum(entries.values_list("amount", flat=True))


def test_unknown_rows_are_credited_back_once_when_unknowns_are_free(
    owner: Persona, settings: Any, run_tasks: RunTasks
) -> None:
    settings.VERIFIER_CHARGE_UNKNOWN = False
    job_id = deep_job(owner, run_tasks)
    body = owner.get(f"/v1/jobs/{job_id}").json()
    assert (body["status"], body["progress"]["unknown"], body["credits_refunded"]) == ("completed", 2, 2)
    assert job_net(owner, job_id) == -2  # one credit per definitive row
    (refund,) = LedgerEntry.objects.filter(account=owner.account, kind="refund")
    assert (refund.amount, refund.reference) == (2, f"{job_id}:unknown_rows_refunded")
    owner.account.refresh_from_db()
    assert owner.account.credit_balance == 998 == ledger_sum(owner)


def test_completing_a_job_twice_refunds_once(owner: Persona, settings: Any, run_tasks: RunTasks) -> None:
    settings.VERIFIER_CHARGE_UNKNOWN = False
    job_id = deep_job(owner, run_tasks)
    assert job_complete_if_done(job_id=job_id) is False  # a second completion (the requeue sweep's) wins nothing
    assert LedgerEntry.objects.filter(account=owner.account, kind="refund").count() == 1
    assert job_net(owner, job_id) == -2 and Job.objects.get(pk=job_id).credits_refunded == 2


def test_by_default_unknown_rows_are_charged_and_nothing_is_refunded(owner: Persona, run_tasks: RunTasks) -> None:
    job_id = deep_job(owner, run_tasks)
    assert owner.get(f"/v1/jobs/{job_id}").json()["credits_refunded"] == 0
    assert job_net(owner, job_id) == -4


def test_the_job_page_says_what_was_given_back(owner: Persona, settings: Any, run_tasks: RunTasks) -> None:
    settings.VERIFIER_CHARGE_UNKNOWN = False
    job_id = deep_job(owner, run_tasks)
    page = logged_in(owner).get(reverse("job", args=[job_id])).content.decode()
    assert 'data-credits-refunded="2"' in page and "2 credits given back" in page
