"""Objections (docs/privacy.md): staff record that a person objects to their address being verified;
from then every verification of it answers 451 address_objected (free, nothing stored), and a bulk
row answers unknown / address_objected, uncharged."""

from __future__ import annotations

from typing import Any

from django.test import Client
from django.urls import reverse

from apikit.models import IdempotencyRecord
from lib.address_keys import _memo, address_key, remembered
from tests.conftest import Persona
from tests.jobs.conftest import RunTasks, ledger_sum, upload
from tests.support.bulk_jobs import bulk_net, csv_of, download, job_body
from tests.support.portal import logged_in
from tests.support.stored import cells_holding
from verification.models import CachedVerdict, Objection

OBJECTED = "jane@good.com"


def objection_recorded(admin_client_: Client, email: str = OBJECTED) -> Any:
    return admin_client_.post(reverse("admin:verification_objection_add"), {"email": email})


def test_staff_record_an_objection_as_its_hmac_with_who_and_when(admin_client_: Client, staff: Any) -> None:
    assert objection_recorded(admin_client_, " Jane@Good.com ").status_code == 302
    objection = Objection.objects.get()
    assert objection.address_key == address_key(OBJECTED)
    assert (objection.recorded_by, objection.recorded_by_email) == (staff, staff.email)
    assert objection.recorded_at is not None and cells_holding(["jane"], [Objection]) == []
    again = objection_recorded(admin_client_)
    assert again.status_code == 200 and "already recorded" in again.content.decode()
    found = admin_client_.get(reverse("admin:verification_objection_changelist"), {"q": OBJECTED})
    assert address_key(OBJECTED) in found.content.decode()


def test_a_verification_of_an_objected_address_answers_451_free_and_stores_nothing(
    owner: Persona, admin_client_: Client
) -> None:
    objection_recorded(admin_client_)
    balance = ledger_sum(owner)
    response = owner.post_json("/v1/verify", {"email": "JANE@good.com"}, **{"Idempotency-Key": "k1"})
    assert response.status_code == 451
    assert response.json() == {
        "error": {
            "code": "address_objected",
            "message": "email: The person at this address objected to its verification: no one may verify it here.",
            "param": "email",
        }
    }
    assert ledger_sum(owner) == balance
    assert not CachedVerdict.objects.exists() and not IdempotencyRecord.objects.exists()
    assert owner.verify("joe@good.com").json()["status"] == "valid"  # anyone else's address as before


def test_a_batch_holding_an_objected_address_is_refused_whole_naming_it(owner: Persona, admin_client_: Client) -> None:
    objection_recorded(admin_client_)
    balance = ledger_sum(owner)
    response = owner.post_json("/v1/verify/batch", {"emails": ["joe@good.com", OBJECTED]})
    assert response.status_code == 451
    assert response.json()["error"]["param"] == "emails"
    assert response.json()["error"]["message"].startswith("emails[1]: ")
    assert ledger_sum(owner) == balance and not CachedVerdict.objects.exists()


def test_a_bulk_row_of_an_objected_address_is_unknown_address_objected_and_not_charged(
    owner: Persona, admin_client_: Client, settings: Any, run_tasks: RunTasks
) -> None:
    objection_recorded(admin_client_)
    settings.BULK_CHUNK_SIZE = 2
    with run_tasks():
        job_id = str(upload(owner, csv_of(["joe@good.com", "Jane@Good.com", "info@good.com"])).json()["id"])
    body = job_body(owner, job_id)
    assert body["progress"]["unknown"] == 1 and body["breakdown"]["address_objected"] == 1
    rows = download(owner, body["result_download_url"])
    assert [(row[0], row[1], row[2]) for row in rows[1:]] == [
        ("joe@good.com", "valid", ""),
        ("jane@good.com", "unknown", "address_objected"),
        ("info@good.com", "risky", "role_based"),
    ]
    assert bulk_net(owner, job_id) == -2  # the objected row's credit went back with its chunk's release


def test_the_portals_verify_form_says_the_address_is_objected_and_charges_nothing(
    owner: Persona, admin_client_: Client
) -> None:
    objection_recorded(admin_client_)
    balance = ledger_sum(owner)
    page = logged_in(owner).post(reverse("verify"), {"email": OBJECTED})
    assert page.status_code == 200 and "objected to its verification" in page.content.decode()
    assert ledger_sum(owner) == balance


def test_the_objected_among_a_batch_are_found_whether_objections_are_fewer_or_more_than_it_asks(db: Any) -> None:
    """Fewer: the few objections are read whole; more: the batch's keys are sent (verification/models/objections.py)."""
    Objection.objects.bulk_create(Objection(address_key=address_key(f"p{i}@example.com")) for i in range(5))
    asked = [f"p{i}@example.com" for i in range(3, 10)]  # 7 asked, 5 objections: all read
    assert Objection.objects.among(asked) == {"p3@example.com", "p4@example.com"}
    assert Objection.objects.among(["p0@example.com", "q@example.com"]) == {"p0@example.com"}  # 2 asked: keys sent
    assert Objection.objects.among([]) == set()


def test_while_nobody_has_objected_a_batch_computes_no_address_key_to_find_out(db: Any) -> None:
    with remembered():
        assert Objection.objects.among(["p0@example.com", "p1@example.com"]) == set()
        assert not _memo.get()  # the keys a worker's batch remembers: none yet
        Objection.objects.create(address_key=address_key("p1@example.com"))
        assert Objection.objects.among(["p0@example.com", "p1@example.com"]) == {"p1@example.com"}
