"""Erasure for a customer (docs/privacy.md): POST /v1/privacy/erasures and the portal's Privacy page
remove every trace of the addresses that the account holds, and say how many went, by store."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import ApiKey, AuditEvent
from apikit.models import IdempotencyRecord
from feedback.models import FeedbackEvent
from privacy.models import AccountExport
from tests.conftest import Persona
from tests.jobs.conftest import RunTasks
from tests.privacy.conftest import ERASED, erase, local_files, traces, zips
from tests.support.bulk_jobs import download, job_body
from tests.support.personas import member_of, sandboxed
from tests.support.portal import logged_in
from tests.support.stored import cells_holding, files_holding
from verification.models import CachedVerdict, RetriedVerification


def test_an_erasure_leaves_no_table_and_no_stored_file_holding_the_address(
    owner: Persona, run_tasks: RunTasks, media: Path
) -> None:
    job_id = traces(owner, run_tasks)
    assert cells_holding([ERASED]) and files_holding([ERASED], local_files(media))  # there to be found
    assert len(zips(local_files(media))) == 1  # the export, built before
    with run_tasks():  # committed
        response = erase(owner, {"emails": [" JANE@good.com "]})
    assert response.status_code == 200
    assert response.json() == {
        "erased": {
            "cached_verdicts": 1,
            "feedback_reports": 1,
            "idempotent_replies": 1,
            "verifications_asked_again": 0,
            "valid_answers": 3,  # the single, the batch and the bulk answer
            "job_result_rows": 1,
            "export_files": 1,
        }
    }
    assert cells_holding([ERASED]) == []
    assert files_holding([ERASED], local_files(media)) == [] and zips(local_files(media)) == []
    rows = download(owner, job_body(owner, job_id)["result_download_url"])
    assert [row[0] for row in rows[1:]] == ["joe@good.com"]  # the others' rows stay


def test_an_erasure_takes_a_verification_being_asked_again_and_its_id_then_answers_404(
    owner: Persona, outsider: Persona
) -> None:
    def pending(persona: Persona) -> str:
        answered = persona.post_json("/v1/verify", {"email": ERASED}).json()
        result = answered | {"status": "unknown", "sub_status": "greylisted", "is_valid": False}
        expires = timezone.now() + timedelta(days=1)
        return RetriedVerification.objects.create(
            account=persona.account, result=result, charged=True, expires_at=expires
        ).pk

    mine, theirs = pending(owner), pending(outsider)
    assert owner.get(f"/v1/verifications/{mine}").status_code == 200
    assert erase(owner, {"emails": [ERASED]}).json()["erased"]["verifications_asked_again"] == 1
    assert owner.get(f"/v1/verifications/{mine}").status_code == 404
    assert outsider.get(f"/v1/verifications/{theirs}").status_code == 200  # another account's stays


def test_an_erasure_touches_no_other_account(owner: Persona, outsider: Persona, run_tasks: RunTasks) -> None:
    traces(outsider, run_tasks)
    owner.verify(ERASED)
    with run_tasks():
        assert erase(owner, {"emails": [ERASED]}).json()["erased"]["cached_verdicts"] == 1
    assert CachedVerdict.objects.filter(account=outsider.account, email=ERASED).count() == 1
    assert FeedbackEvent.objects.filter(account=outsider.account).count() == 1
    assert IdempotencyRecord.objects.filter(account=outsider.account).count() == 1
    assert AccountExport.objects.get(account=outsider.account).file_name  # its export stays


def test_an_erasure_is_audited_without_the_addresses(owner: Persona) -> None:
    owner.verify(ERASED)
    erase(owner, {"emails": [ERASED, "joe@good.com"]})
    event = AuditEvent.objects.get(account=owner.account, action=AuditEvent.Action.ADDRESSES_ERASED)
    assert event.key_prefix and event.detail.startswith("2 addresses; cached_verdicts 1,")
    assert "jane" not in event.detail


def test_a_test_key_erases_nothing(owner: Persona) -> None:
    owner.verify(ERASED)
    response = erase(sandboxed(owner), {"emails": [ERASED]})
    assert (response.status_code, response.json()["error"]["code"]) == (403, "key_not_permitted")
    assert CachedVerdict.objects.filter(account=owner.account, email=ERASED).exists()


@pytest.mark.parametrize(
    "body",
    [{}, {"emails": []}, {"emails": "jane@good.com"}, {"emails": [ERASED, 7]}, {"emails": [" "]},
     {"emails": ["a@b.co"] * 1001}, {"emails": ["x" * 1001]}, [ERASED], {"emails": ["\x00"]},
     {"emails": [ERASED, "jane\x00@good.com"]}, {"emails": ["jane@good.com\x1b"]}],
)  # fmt: skip
def test_bad_input_is_refused_in_the_contracts_shape_and_erases_nothing(owner: Persona, body: object) -> None:
    owner.verify(ERASED)
    response = erase(owner, body)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_request"
    assert response.json()["error"]["param"] in ("emails", None)
    assert CachedVerdict.objects.count() == 1 and not AuditEvent.objects.filter(action="addresses_erased").exists()


@pytest.mark.parametrize(("role", "scope"), [("developer", "full"), ("owner", "verify"), ("owner", "read")])
def test_only_a_full_key_of_an_owner_or_admin_may_erase(owner: Persona, role: str, scope: str) -> None:
    member = member_of(owner, role)
    key, raw = ApiKey.issue(account=owner.account, created_by=member, scope=scope)
    owner.verify(ERASED)
    response = Persona(account=owner.account, api_key=raw, client=Client()).post_json(
        "/v1/privacy/erasures", {"emails": [ERASED]}
    )
    assert response.status_code == 403 and response.json()["error"]["code"] == "key_not_permitted"
    assert CachedVerdict.objects.count() == 1


def test_the_portal_erases_after_confirmation_and_says_how_many(owner: Persona, run_tasks: RunTasks) -> None:
    traces(owner, run_tasks)
    client = logged_in(owner)
    refused = client.post(reverse("privacy"), {"emails": ERASED})
    assert refused.status_code == 400 and CachedVerdict.objects.filter(email=ERASED).exists()  # not confirmed
    done = client.post(reverse("privacy"), {"emails": f"{ERASED}\nnobody@good.com", "confirm": "on"}, follow=True)
    assert "2 addresses erased: cached verdicts 1, feedback reports 1" in done.content.decode()
    assert cells_holding([ERASED]) == []


def test_the_portal_page_needs_its_csrf_token_and_an_owner_or_admin(owner: Persona) -> None:
    client = logged_in(owner)
    client.handler.enforce_csrf_checks = True
    assert client.post(reverse("privacy"), {"emails": ERASED, "confirm": "on"}).status_code == 403
    page = client.get(reverse("privacy"))
    assert page.status_code == 200 and "csrfmiddlewaretoken" in page.content.decode()
    developer = Client()
    developer.force_login(member_of(owner, "developer"))
    assert developer.get(reverse("privacy")).status_code == 403
