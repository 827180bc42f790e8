"""A bulk chunk's charged valid answers: one packed row written with the charge, filed as ValidAnswer
rows after the job completes, and before anything reads them (docs/guarantee.md, "When an answer is kept")."""

from __future__ import annotations

import dataclasses
import time
from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection, transaction
from django.utils import timezone

from billing import guarantee, guarantee_report
from billing.models import ANSWERS_KEPT, FAMILIES, AnswerBatch, LedgerEntry, ValidAnswer
from lib.address_keys import address_key, key_head
from privacy.erasure import erasure_for_account
from tests.conftest import Persona
from tests.support.db import committed_db
from tests.support.esp_events import MAILGUN_KEY, mailgun_failure, mailgun_key_set, mailgun_post, mailgun_signed
from tests.support.threads import run_at_once
from verification.engine import Status, Verdict
from verification.engine.providers import PROVIDER_FAMILIES
from verification.engine.sandbox import sandbox_verdicts
from verification.guarantee import valid_answers_batch, valid_answers_record

COLUMNS = ("address_key", "key_head", "provider_family", "high_confidence", "answered_at", "expires_at")


def verdicts(count: int = 8) -> list[Verdict]:
    """Valid and invalid answers of every provider family, high confidence and not."""
    (template,) = sandbox_verdicts(["a@b.com"])
    assert template.status is Status.VALID
    providers = ["google", "microsoft", "yahoo", "zoho", None]
    return [
        dataclasses.replace(
            template,
            email=f"person{n}@example{n % 3}.com",
            status=Status.VALID if n % 4 else Status.INVALID,
            confidence="high" if n % 3 else "medium",
            mail_provider=providers[n % len(providers)],
        )
        for n in range(count)
    ]


def kept(persona: Persona) -> list[tuple[Any, ...]]:
    return sorted(ValidAnswer.objects.filter(account=persona.account).values_list(*COLUMNS))


def batched(persona: Persona, rows: list[Verdict]) -> None:
    with transaction.atomic():
        valid_answers_batch(account_id=persona.account.pk, verdicts=rows)


def test_a_batch_files_exactly_the_rows_a_direct_record_writes(owner: Persona, outsider: Persona) -> None:
    rows = verdicts(40)
    with time_machine.travel("2026-11-30 12:00:00+00:00", tick=False):
        batched(owner, rows)
        valid_answers_record(account_id=outsider.account.pk, verdicts=rows)
    assert AnswerBatch.objects.count() == 1
    assert kept(owner) == []  # not yet filed
    assert guarantee.answers_filed(owner.account.pk) == 30
    assert kept(owner) == kept(outsider)
    assert len(kept(owner)) == 30
    assert {row[2] for row in kept(owner)} == {"google", "microsoft", "yahoo", "other"}
    assert {row[3] for row in kept(owner)} == {True, False}
    key = address_key("person1@example1.com")
    assert (key, key_head(key)) in {row[:2] for row in kept(owner)}
    assert {row[5] - row[4] for row in kept(owner)} == {ANSWERS_KEPT}
    assert not AnswerBatch.objects.exists()


def test_the_families_a_batch_packs_are_the_engines() -> None:
    assert FAMILIES == PROVIDER_FAMILIES  # packed by their index: billing keeps its own copy, below the engine


def test_filing_again_files_nothing_more_and_leaves_other_accounts_batches(owner: Persona, outsider: Persona) -> None:
    batched(owner, verdicts())
    batched(outsider, verdicts())
    assert guarantee.answers_filed(owner.account.pk) == 6
    assert guarantee.answers_filed(owner.account.pk) == 0
    assert list(AnswerBatch.objects.values_list("account_id", flat=True)) == [outsider.account.pk]
    assert guarantee.answers_filed() == 6  # every account's


def test_a_large_filing_goes_in_several_transactions_of_whole_batches(owner: Persona, monkeypatch: Any) -> None:
    monkeypatch.setattr(guarantee, "FILING_ANSWERS", 10)
    for _ in range(5):
        batched(owner, verdicts())  # 6 valid answers each
    assert guarantee.answers_filed(owner.account.pk) == 30
    assert ValidAnswer.objects.count() == 30
    assert not AnswerBatch.objects.exists()


def test_a_transaction_takes_whole_batches_up_to_its_share_and_at_least_one(owner: Persona, monkeypatch: Any) -> None:
    for _ in range(3):
        batched(owner, verdicts())  # 6 valid answers each
    oldest = list(AnswerBatch.objects.order_by("pk").values_list("pk", flat=True))
    monkeypatch.setattr(guarantee, "FILING_ANSWERS", 13)
    assert guarantee._next_batches(AnswerBatch.objects.all()) == oldest[:2]
    monkeypatch.setattr(guarantee, "FILING_ANSWERS", 5)
    assert guarantee._next_batches(AnswerBatch.objects.all()) == oldest[:1]
    monkeypatch.setattr(guarantee, "_PEEK", 1)  # more batches wait than a filing looks at: it comes back for them
    assert guarantee.answers_filed(owner.account.pk) == 18


def test_a_batch_without_a_valid_answer_writes_nothing(owner: Persona) -> None:
    batched(owner, [row for row in verdicts() if row.status is not Status.VALID])
    assert not AnswerBatch.objects.exists()


def test_the_guarantee_figures_count_answers_not_yet_filed(owner: Persona) -> None:
    batched(owner, verdicts())
    summary = guarantee_report.summary(owner.account.pk, timezone.now())
    assert summary["valid_answers"] == 6
    assert summary["bounce_rate_by_provider"]["google"]["valid"] == 1


def test_a_signed_bounce_refunds_an_answer_not_yet_filed(owner: Persona, settings: Any) -> None:
    settings.GUARANTEE_MAX_SHARE = 1.0
    mailgun_key_set(owner.account)
    batched(owner, verdicts())  # person1@example1.com: valid, high confidence
    body = mailgun_signed(mailgun_failure("person1@example1.com", time.time()), MAILGUN_KEY)
    assert mailgun_post(owner.account, body).status_code == 200
    refunds = LedgerEntry.objects.filter(account=owner.account, kind=LedgerEntry.Kind.GUARANTEE_REFUND)
    assert list(refunds.values_list("amount", flat=True)) == [1]


def test_erasure_reaches_answers_not_yet_filed(owner: Persona) -> None:
    batched(owner, verdicts())
    erased = erasure_for_account(account=owner.account, emails=["person1@example1.com"])
    assert erased["valid_answers"] == 1
    assert not AnswerBatch.objects.exists()  # filed first: nothing left to bring the erased answer back
    assert address_key("person1@example1.com") not in {row[0] for row in kept(owner)}
    assert len(kept(owner)) == 5


def test_batches_whose_filing_task_was_lost_are_filed_after_five_minutes(owner: Persona, outsider: Persona) -> None:
    with time_machine.travel(timezone.now() - timedelta(minutes=6)):
        batched(owner, verdicts())
    batched(outsider, verdicts())
    assert guarantee.answers_left_filed() == 6
    assert list(AnswerBatch.objects.values_list("account_id", flat=True)) == [outsider.account.pk]


@pytest.mark.usefixtures("media")
def test_a_bulk_job_leaves_its_valid_answers_filed_once_it_completes(owner: Persona, run_tasks: Any) -> None:
    upload = SimpleUploadedFile("list.csv", b"jane@good.com\njohn@good.com\njane@nullmx.com\n", "text/csv")
    with run_tasks():
        response = owner.client.post("/v1/verify/bulk", data={"file": upload}, headers=owner.auth({}))
    assert owner.get(f"/v1/jobs/{response.json()['id']}").json()["progress"]["valid"] == 2
    assert not AnswerBatch.objects.exists()
    keys = {address_key("jane@good.com"), address_key("john@good.com")}
    assert {row[0] for row in kept(owner)} == keys


@pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent filings need PostgreSQL's row locks")
@committed_db
def test_ten_filings_at_once_file_each_answer_once_on_postgresql(owner: Persona) -> None:
    for _ in range(4):
        batched(owner, verdicts())
    filed = run_at_once(10, lambda: guarantee.answers_filed(owner.account.pk))
    assert sum(filed) == 24
    assert ValidAnswer.objects.count() == 24
