"""The portal's Feedback page: webhook URLs (rotatable), a CSV upload, and a deep job's catch-all split."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone

from accounts.models import AuditEvent, Membership, Role
from feedback.models import FeedbackEvent
from feedback.services import webhook_urls
from lib.address_keys import address_key
from tests.conftest import Persona
from tests.factories import UserFactory
from tests.jobs.conftest import RunTasks
from tests.support.bulk_jobs import deep_upload
from tests.support.portal import logged_in


def upload_csv(client: Client, text: str) -> Any:
    return client.post("/feedback/upload", {"file": SimpleUploadedFile("events.csv", text.encode(), "text/csv")})


def test_page_shows_the_accounts_own_webhook_urls(owner: Persona, outsider: Persona) -> None:
    page = logged_in(owner).get("/feedback").content.decode().replace("<wbr>", "")
    for url in webhook_urls(owner.account).values():
        assert url in page
    assert webhook_urls(outsider.account)["sendgrid"] not in page


def test_each_webhook_url_is_named_as_its_service_names_itself_and_has_a_copy_button(owner: Persona) -> None:
    page = logged_in(owner).get("/feedback").content.decode()
    for provider, name in [
        ("sendgrid", "SendGrid"),
        ("mailgun", "Mailgun"),
        ("postmark", "Postmark"),
        ("ses", "Amazon SES"),
    ]:
        assert f'<tr data-webhook="{provider}"><td>{name}</td>' in page
        assert f'data-copy="#webhook-{provider}"' in page and f'id="webhook-{provider}"' in page
    assert "Sendgrid" not in page and ">Ses<" not in page
    assert "feedback/<wbr>sendgrid/<wbr>" in page  # a narrow page breaks the URL after a slash, not mid-word


def test_a_viewer_may_not_see_the_urls(owner: Persona) -> None:
    viewer = UserFactory()
    Membership.objects.create(account=owner.account, user=viewer, role=Role.VIEWER)
    client = Client()
    client.force_login(viewer)
    assert client.get("/feedback").status_code in (403, 404)


def test_rotate_asks_first_then_makes_new_urls(owner: Persona) -> None:
    client, before = logged_in(owner), webhook_urls(owner.account)["postmark"]
    assert "Make new URLs" in client.get("/feedback/rotate").content.decode()
    assert webhook_urls(owner.account)["postmark"] == before
    assert client.post("/feedback/rotate").status_code == 302
    after = webhook_urls(owner.account)["postmark"]
    assert after != before and after in client.get("/feedback").content.decode().replace("<wbr>", "")


def test_csv_upload_stores_events_like_the_api(owner: Persona) -> None:
    client = logged_in(owner)
    now = timezone.now().strftime("%Y-%m-%dT%H:%M:%SZ")
    response = upload_csv(
        client, f"email,outcome,occurred_at\njane@good.com,hard_bounce,{now}\nnot-an-address,delivered\n"
    )
    assert response.status_code == 302
    assert "1 events taken, 1 ignored" in client.get("/feedback").content.decode().replace("<wbr>", "")
    assert list(FeedbackEvent.objects.values_list("account_id", "address_key", "outcome")) == [
        (owner.account.pk, address_key("jane@good.com"), "hard_bounce")
    ]
    assert owner.verify("jane@good.com").json()["status"] == "invalid"


def test_a_csv_with_an_unknown_outcome_is_refused_whole(owner: Persona) -> None:
    response = upload_csv(logged_in(owner), "jane@good.com,delivered\njoe@good.com,opened\n")
    assert response.status_code == 400
    assert "row 2.outcome" in response.content.decode()
    assert not FeedbackEvent.objects.exists()


def test_a_sendgrid_sample_posted_to_the_shown_url_changes_the_verdict_in_the_portal(owner: Persona) -> None:
    """As a new user would: copy the SendGrid URL from the page, post the documented sample, verify."""
    client = logged_in(owner)
    page = client.get("/feedback").content.decode().replace("<wbr>", "")
    url = webhook_urls(owner.account)["sendgrid"]
    assert url in page
    event = {
        "email": "jane@good.com",
        "timestamp": int(timezone.now().timestamp()),
        "event": "bounce",
        "reason": "500 unknown recipient",
        "status": "5.0.0",
        "type": "bounce",
    }
    path = "/" + url.split("://", 1)[1].split("/", 1)[1]
    assert Client().post(path, json.dumps([event]), content_type="application/json").json() == {
        "accepted": 1,
        "ignored": 0,
    }
    panel = client.post("/verify", {"email": "jane@good.com"}).content.decode()
    assert "mailbox_not_found" in panel or "No such mailbox" in panel or "invalid" in panel.lower()


@pytest.mark.usefixtures("deep_farm")
def test_a_deep_jobs_page_shows_how_many_catch_all_rows_are_likely_to_deliver(
    owner: Persona, run_tasks: RunTasks, settings: Any
) -> None:
    settings.BULK_CHUNK_SIZE = 4
    events = [{"email": f"gone{n}@bounces.deepfarm.net", "outcome": "hard_bounce"} for n in range(20)]
    events += [{"email": f"real{n}@anything.deepfarm.net", "outcome": "delivered"} for n in range(10)]
    owner.post_json("/v1/feedback", {"events": events})
    rows = ["whoever@anything.deepfarm.net", "someone@anything.deepfarm.net", "x@bounces.deepfarm.net"]
    with run_tasks():
        job_id = deep_upload(owner, rows).json()["id"]
    breakdown = owner.get(f"/v1/jobs/{job_id}").json()["breakdown"]
    assert breakdown["catch_all"] == 3
    assert (breakdown["catch_all_likely"], breakdown["catch_all_unlikely"]) == (2, 1)
    page = logged_in(owner).get(f"/jobs/{job_id}").content.decode()
    assert 'data-breakdown="catch_all_likely"' in page and "Catch-all, likely to deliver" in page
    assert "<strong>2 of 3</strong> catch-all rows are likely to deliver" in page


def test_another_accounts_reports_are_never_shown(owner: Persona, outsider: Persona) -> None:
    events = [{"email": f"a{n}@good.com", "outcome": "hard_bounce"} for n in range(3)]
    owner.post_json("/v1/feedback", {"events": events})
    assert "3 events reported" in logged_in(owner).get("/feedback").content.decode()
    page = logged_in(outsider).get("/feedback").content.decode()
    assert "0 events reported" in page and "a0@good.com" not in page


def test_an_outsider_rotating_changes_only_their_own_urls(owner: Persona, outsider: Persona) -> None:
    before = webhook_urls(owner.account)
    assert logged_in(outsider).post("/feedback/rotate").status_code == 302
    assert webhook_urls(owner.account) == before


def test_rotating_the_webhook_urls_is_in_the_audit_log(owner: Persona) -> None:
    client = logged_in(owner)
    client.post("/feedback/rotate")
    event = owner.account.audit_events.get(action=AuditEvent.Action.FEEDBACK_URLS_ROTATED)
    assert event.actor_email == owner.account.owner.email
    assert "Feedback webhook URLs rotated" in client.get("/settings/audit").content.decode()


def test_asking_to_rotate_without_confirming_writes_no_audit_event(owner: Persona) -> None:
    logged_in(owner).get("/feedback/rotate")
    assert not owner.account.audit_events.filter(action=AuditEvent.Action.FEEDBACK_URLS_ROTATED).exists()


def test_setting_the_mailgun_key_is_audited_without_the_key(owner: Persona) -> None:
    logged_in(owner).post("/feedback/mailgun-key", {"mailgun_signing_key": "key-s3cr3t"})
    event = owner.account.audit_events.get(action=AuditEvent.Action.MAILGUN_KEY_CHANGED)
    assert "mailgun_signing_key: set" in event.detail and "s3cr3t" not in event.detail
