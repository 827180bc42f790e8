"""Erasure for a person (docs/privacy.md): staff erase an address in the admin from every account and
from the shared stores, recorded with the staff member, the reason and what went, never the address."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.test import Client
from django.urls import reverse

from lib.address_keys import address_key
from privacy.models import PersonErasure
from tests.conftest import Persona
from tests.jobs.conftest import RunTasks
from tests.privacy.conftest import ERASED, erased_by_staff, local_files, traces, zips
from tests.support.stored import cells_holding, files_holding
from verification.engine.smtp_answers import Answer
from verification.engine.smtp_replies import Meaning, Reply
from verification.models import CatchAllAnswer, MailboxAnswer


def test_staff_erase_a_person_from_every_account_and_the_shared_stores(
    owner: Persona, outsider: Persona, run_tasks: RunTasks, media: Path, admin_client_: Client, staff: Any
) -> None:
    traces(owner, run_tasks)
    traces(outsider, run_tasks)
    MailboxAnswer.objects.store_many({ERASED: Answer(Reply(250, "2.1.5 OK"), Meaning.ACCEPTED)})
    CatchAllAnswer.objects.store_many({"good.com": False, "other.com": True})
    with run_tasks():  # committed
        assert erased_by_staff(admin_client_, " Jane@Good.com ").status_code == 302
    record = PersonErasure.objects.get()
    assert (record.erased_by, record.erased_by_email, record.reason) == (staff, staff.email, "Request 2026-114 by mail")
    assert record.address_key == address_key(ERASED)
    assert record.erased == {
        "cached_verdicts": 2,
        "feedback_reports": 2,
        "idempotent_replies": 2,
        "verifications_asked_again": 0,
        "valid_answers": 6,
        "job_result_rows": 2,
        "export_files": 2,  # each account's export built before
        "mailbox_answers": 1,
        "catch_all_answers": 1,
    }
    assert not MailboxAnswer.objects.exists() and list(CatchAllAnswer.objects.values_list("domain", flat=True)) == [
        "other.com"
    ]
    assert cells_holding([ERASED]) == [] and files_holding([ERASED], local_files(media)) == []
    assert zips(local_files(media)) == []


def test_a_person_erasure_needs_a_reason_and_is_never_changed_or_deleted(admin_client_: Client) -> None:
    assert erased_by_staff(admin_client_, reason="").status_code == 200  # the form again, with its error
    assert not PersonErasure.objects.exists()
    erased_by_staff(admin_client_)
    record = PersonErasure.objects.get()
    assert (
        admin_client_.post(reverse("admin:privacy_personerasure_delete", args=[record.pk]), {"post": "yes"}).status_code
        == 403
    )
    page = admin_client_.get(reverse("admin:privacy_personerasure_changelist"), {"q": ERASED})
    assert "Request 2026-114" in page.content.decode()
