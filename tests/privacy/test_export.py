"""An account's export (docs/privacy.md, "Export"): an owner asks with POST /v1/account/export or on the
Privacy page, a worker builds the ZIP (django-q2 in sync mode here), the owner is mailed a link valid
24 h, and the ZIP holds the account's rows, no secret and nothing of another account."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import time_machine
from django.core import mail
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import ApiKey, AuditEvent
from billing.models import LedgerEntry, Payment
from lib.prune import prune_expired
from privacy import exports, tasks
from privacy.models import AccountExport
from tests.conftest import Persona, make_persona
from tests.jobs.conftest import RunTasks
from tests.privacy.conftest import csv_rows, download, exported, json_rows, zip_of
from tests.support.personas import member_of, sandboxed
from tests.support.portal import logged_in

SECTIONS = ("account", "members", "api_keys", "credit_ledger", "payments", "audit_log", "jobs", "feedback_reports")


def account_with_history(persona: Persona, run_tasks: RunTasks, *, tag: str) -> str:
    """Verifications (ledger rows), a finished job, a report, a payment, a member and a second key; the job's id."""
    assert persona.verify(f"{tag}@good.com").status_code == 200
    events = [{"email": f"{tag}@good.com", "outcome": "delivered"}]
    assert persona.post_json("/v1/feedback", {"events": events}).status_code == 200
    with run_tasks():
        upload = SimpleUploadedFile(f"{tag}.csv", f"email\n{tag}1@good.com\n{tag}2@good.com\n".encode(), "text/csv")
        job_id = str(persona.client.post("/v1/verify/bulk", {"file": upload}, headers=persona.auth({})).json()["id"])
    Payment.objects.create(
        account=persona.account, stripe_id=f"pi_{tag}", kind="pack", product="pack_1k", credits=1000, cents=1000,
        currency="usd", status="succeeded",
    )  # fmt: skip
    ApiKey.issue(account=persona.account, name=f"{tag} second key")
    return job_id


def test_the_export_holds_the_accounts_rows_as_json_and_csv_and_nothing_else(
    owner: Persona, outsider: Persona, run_tasks: RunTasks
) -> None:
    job_id = account_with_history(owner, run_tasks, tag="jane")
    outsiders_job = account_with_history(outsider, run_tasks, tag="olga")
    member_of(owner, "developer")
    export = exported(owner, run_tasks)
    assert (export["status"], export["progress"], export["failure"]) == ("done", 100, None)
    assert export["rows_done"] == export["rows_total"] > 0 and export["size_bytes"] > 0
    archive = zip_of(download(export["download_url"]))
    assert sorted(archive.namelist()) == sorted(
        ["README.txt", *(f"{s}.{kind}" for s in SECTIONS for kind in ("json", "csv"))]
    )
    for section in SECTIONS:  # the CSV says what the JSON says
        assert [{k: str(v) for k, v in row.items()} for row in csv_rows(archive, section)] == [
            {k: "" if v is None else str(v).lower() if isinstance(v, bool) else str(v) for k, v in row.items()}
            for row in json_rows(archive, section)
        ]
    [account] = json_rows(archive, "account")
    assert (account["id"], account["owner_email"]) == (str(owner.account.public_id), owner.account.email)
    assert account["credit_balance"] == owner.account.__class__.objects.get(pk=owner.account.pk).credit_balance
    ledger = json_rows(archive, "credit_ledger")
    assert [row["id"] for row in ledger] == sorted(
        LedgerEntry.objects.filter(account=owner.account).values_list("pk", flat=True)
    )
    assert sum(row["amount"] for row in ledger) == account["credit_balance"]
    assert [row["id"] for row in json_rows(archive, "jobs")] == [job_id]
    assert [row["stripe_id"] for row in json_rows(archive, "payments")] == ["pi_jane"]
    assert sorted(row["role"] for row in json_rows(archive, "members")) == ["developer", "owner"]
    assert [(row["domain"], row["outcome"]) for row in json_rows(archive, "feedback_reports")] == [
        ("good.com", "delivered")
    ]
    keys = json_rows(archive, "api_keys")
    assert sorted(row["prefix"] for row in keys) == sorted(
        ApiKey.objects.filter(account=owner.account).values_list("prefix", flat=True)
    )
    everything = b"".join(archive.read(name) for name in archive.namelist())
    secrets = [owner.api_key, owner.account.signing_secret, *ApiKey.objects.values_list("key_hash", flat=True)]
    assert not [secret for secret in secrets if secret.encode() in everything]
    others = [outsiders_job, outsider.account.email, "pi_olga", "olga", str(outsider.account.public_id)]
    assert not [other for other in others if other.encode() in everything]


def test_the_owner_is_mailed_a_link_that_downloads_for_24_hours_then_answers_410(
    owner: Persona, run_tasks: RunTasks, media: Path
) -> None:
    export = exported(owner, run_tasks)
    [message] = [m for m in mail.outbox if m.subject == "Your account's data export is ready"]
    assert message.to == [owner.account.email]
    link = re.search(r"http://testserver/v1/account/export/link/(\S+)", message.body)
    assert link and link[1].startswith(f"{export['id']}.")  # signed at mailing; download_url at each read
    assert "README.txt" in zip_of(download(link[0])).namelist()
    with time_machine.travel(timezone.now() + timedelta(hours=24, seconds=1)):
        expired = download(link[0])
        assert (expired.status_code, expired.json()["error"]["code"]) == (410, "export_expired")
        again = owner.get(f"/v1/account/export/{export['id']}").json()
        assert (again["status"], again["download_url"]) == ("expired", None)
        assert (owner.get(f"/v1/account/export/{export['id']}/download").status_code) == 410
        assert list((media / "exports").iterdir())  # the sweep deletes it, not the request
        assert tasks.expire_export_files() == 1
        assert not list((media / "exports").iterdir())
    with time_machine.travel(timezone.now() + timedelta(days=31)):
        prune_expired()
        assert owner.get(f"/v1/account/export/{export['id']}").status_code == 404


def test_a_zip_a_lost_worker_left_unnamed_goes_after_an_hour(owner: Persona, run_tasks: RunTasks, media: Path) -> None:
    export = exported(owner, run_tasks)
    (media / "exports" / "999999.zip").write_bytes(b"PK")  # stored, then its worker killed before "done"
    assert tasks.expire_export_files() == 0  # under an hour old: it may be a build about to be done
    with time_machine.travel(timezone.now() + timedelta(hours=2)):
        assert tasks.expire_export_files() == 1
    assert [path.name for path in (media / "exports").iterdir()] == [f"{export['id']}.zip"]


def test_the_keys_download_redirects_to_the_signed_link_and_a_tampered_link_is_404(
    owner: Persona, run_tasks: RunTasks
) -> None:
    export = exported(owner, run_tasks)
    # A link is signed with the second it was made in: the resource's and the redirect's, made in one.
    with time_machine.travel(timezone.now(), tick=False):
        link = owner.get(f"/v1/account/export/{export['id']}").json()["download_url"]
        response = owner.get(f"/v1/account/export/{export['id']}/download")
    assert (response.status_code, response["Location"]) == (302, link)
    assert zip_of(download(link)).namelist()
    tampered = link[:-2] + ("AA" if not link.endswith("AA") else "BB")
    assert (download(tampered).status_code, download(tampered).json()["error"]["code"]) == (404, "not_found")


def test_asking_again_while_one_is_in_flight_answers_that_one_and_audits_once(
    owner: Persona, run_tasks: RunTasks
) -> None:
    first = owner.post_json("/v1/account/export", {})  # queued: its task runs only once committed
    second = owner.post_json("/v1/account/export", {})
    assert (first.status_code, second.status_code) == (202, 202)
    assert first.json()["id"] == second.json()["id"] and second.json()["status"] == "queued"
    assert AccountExport.objects.count() == 1
    assert list(AuditEvent.objects.filter(action="export_requested").values_list("detail", flat=True)) == [
        first.json()["id"]
    ]
    not_ready = owner.get(f"/v1/account/export/{first.json()['id']}/download")
    assert (not_ready.status_code, not_ready.json()["error"]["code"]) == (409, "export_not_ready")
    tasks.build_export(first.json()["id"])  # its worker, as the queue would run it once committed
    assert owner.get(first["Location"]).json()["status"] == "done"
    assert exported(owner, run_tasks)["id"] != first.json()["id"]  # none in flight: a new one


def test_an_export_finishing_while_another_is_asked_for_gives_its_place_to_the_new_one(
    owner: Persona, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seen by the fuzzer on a live stack: the insert met the one in flight, which was done by the look."""
    in_flight = owner.post_json("/v1/account/export", {}).json()["id"]
    real = exports._queued

    def finished_meanwhile(*args: Any) -> AccountExport:
        try:
            return real(*args)
        finally:  # the constraint refused the insert; the worker finishes the export in flight now
            AccountExport.objects.filter(pk=in_flight).update(status="done")

    monkeypatch.setattr(exports, "_queued", finished_meanwhile)
    asked = owner.post_json("/v1/account/export", {})
    assert asked.status_code == 202, asked.content
    assert asked.json()["id"] != in_flight and asked.json()["status"] == "queued"


def test_an_export_whose_worker_was_lost_is_failed_and_a_new_one_made(owner: Persona, run_tasks: RunTasks) -> None:
    lost = owner.post_json("/v1/account/export", {}).json()["id"]
    long_ago = timezone.now() - timedelta(minutes=11)
    AccountExport.objects.filter(pk=lost).update(status="running", started_at=long_ago, heartbeat_at=long_ago)
    export = exported(owner, run_tasks)
    assert export["id"] != lost and export["status"] == "done"
    assert owner.get(f"/v1/account/export/{lost}").json()["status"] == "failed"


@pytest.mark.parametrize(
    ("role", "scope"), [("admin", "full"), ("developer", "full"), ("owner", "read"), ("owner", "verify")]
)
def test_only_a_full_key_made_by_an_owner_may_export(owner: Persona, role: str, scope: str) -> None:
    _, raw = ApiKey.issue(account=owner.account, created_by=member_of(owner, role), scope=scope)
    caller = Persona(account=owner.account, api_key=raw, client=Client())
    response = caller.post_json("/v1/account/export", {})
    assert (response.status_code, response.json()["error"]["code"]) == (403, "key_not_permitted")
    assert not AccountExport.objects.exists()


def test_another_accounts_export_is_404_everywhere(owner: Persona, outsider: Persona, run_tasks: RunTasks) -> None:
    export = exported(owner, run_tasks)
    for path in (f"/v1/account/export/{export['id']}", f"/v1/account/export/{export['id']}/download"):
        response = outsider.get(path)
        assert (response.status_code, response.json()["error"]["code"]) == (404, "not_found")
    page = logged_in(outsider).get(reverse("privacy-export-download", args=[export["id"]]))
    assert page.status_code == 404


def test_a_test_key_exports_nothing_and_reads_no_export(owner: Persona, run_tasks: RunTasks) -> None:
    """The sandbox never reaches the account's live data, even with the owner's full scope."""
    export = exported(owner, run_tasks)
    sandbox = sandboxed(owner)
    for response in (
        sandbox.post_json("/v1/account/export", {}),
        sandbox.get(f"/v1/account/export/{export['id']}"),
        sandbox.get(f"/v1/account/export/{export['id']}/download"),
    ):
        assert (response.status_code, response.json()["error"]["code"]) == (403, "key_not_permitted")
        assert "test key" in response.json()["error"]["message"]
    assert AccountExport.objects.count() == 1


def test_the_owner_exports_from_the_privacy_page_and_downloads_it_there(owner: Persona, run_tasks: RunTasks) -> None:
    client = logged_in(owner)
    assert "Export the account's data</button>" in client.get(reverse("privacy")).content.decode()
    with run_tasks():
        asked = client.post(reverse("privacy-export"), follow=True)
    assert "Export asked for" in asked.content.decode()
    [export] = AccountExport.objects.all()
    page = client.get(reverse("privacy")).content.decode()
    assert f'data-export="{export.pk}"' in page and "Ready until" in page
    assert AuditEvent.objects.get(action="export_requested").actor_email == owner.account.email
    response = client.get(reverse("privacy-export-download", args=[export.pk]))
    assert response.status_code == 302
    assert "account.json" in zip_of(Client().get(response["Location"].removeprefix("http://testserver"))).namelist()


def test_an_admin_sees_no_export_on_the_privacy_page_and_may_not_ask(owner: Persona) -> None:
    admin = Client()
    admin.force_login(member_of(owner, "admin"))
    page = admin.get(reverse("privacy"))
    assert page.status_code == 200 and "privacy/export" not in page.content.decode()
    assert admin.post(reverse("privacy-export")).status_code == 403
    assert not AccountExport.objects.exists()


def test_the_accounts_deletion_takes_its_exports_and_their_files(
    db: None, run_tasks: RunTasks, media: Path, django_capture_on_commit_callbacks: Any
) -> None:
    owner = make_persona(credits=0)  # no ledger: an account with one is deactivated, never deleted
    exported(owner, run_tasks)
    assert list((media / "exports").iterdir())
    with django_capture_on_commit_callbacks(execute=True):
        owner.account.delete()
    assert not AccountExport.objects.exists() and not list((media / "exports").iterdir())


def test_progress_and_the_heartbeat_are_written_while_the_zip_is_built(
    owner: Persona, run_tasks: RunTasks, monkeypatch: pytest.MonkeyPatch
) -> None:
    from billing.services import credits_grant
    from privacy import export_build

    for _ in range(30):
        credits_grant(account=owner.account, amount=1, note="one more ledger row")
    monkeypatch.setattr(export_build, "PROGRESS_ROWS", 10)
    seen: list[tuple[int, int]] = []
    write = export_build._csv_write

    def watched(text: Any, section: Any, progress: Any) -> None:  # what a poll sees between two parts
        export = AccountExport.objects.get()
        seen.append((export.rows_done, export.percent))
        write(text, section, progress)

    monkeypatch.setattr(export_build, "_csv_write", watched)
    export = exported(owner, run_tasks)
    done = [rows for rows, _ in seen]
    assert done == sorted(done) and 0 < done[-1] <= export["rows_total"]  # written as the build went
    assert 0 < seen[-1][1] < 100
    assert export["rows_done"] == export["rows_total"] >= 2 * 31
