"""Teams and two-factor sign-in in a real Chromium: enrol TOTP with a code computed from the page's
secret, sign out, sign in (a wrong code refused, the right one accepted), use a recovery code once;
invite a member by the link in the mail, accept as a new user, act as a viewer."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.core import mail
from time_machine import TimeMachineFixture

from tests.support.browser import BROWSER, CHROMIUM, IN_CI, as_a_worker, log_in, snap
from tests.support.totp import next_step_starts, totp_code

pytestmark = BROWSER


if CHROMIUM.exists() or IN_CI:
    from playwright.sync_api import Page, expect


def log_out(page: Page) -> None:
    page.get_by_role("button", name="Log out").click()
    expect(page.get_by_role("link", name="Log in")).to_be_visible()


def give_code(page: Page, code: str) -> None:
    page.get_by_label("Code").fill(code)
    page.get_by_role("button", name="Verify").click()


def test_two_factor_enrolment_sign_in_and_recovery_codes(page: Page, time_machine: TimeMachineFixture) -> None:
    from tests.factories import AccountFactory

    email = AccountFactory().email
    log_in(page, email)
    expect(page).to_have_url(re.compile(r"/dashboard$"))
    page.get_by_role("link", name="Security").click()
    secret = page.locator("[data-totp-secret]").inner_text()
    expect(page.locator(".totp-qr svg")).to_be_visible()
    snap(page, "20-two-factor-enrol")
    page.get_by_label("Code").fill(totp_code(secret))
    page.get_by_role("button", name="Turn on two-factor").click()
    expect(page.locator("[data-recovery-codes] li")).to_have_count(10)  # the page after the POST, not before
    codes = page.locator("[data-recovery-codes] li").all_inner_texts()
    assert len(set(codes)) == 10
    log_out(page)

    log_in(page, email)
    expect(page).to_have_url(re.compile(r"/login/code$"))
    give_code(page, "000000")
    expect(page.get_by_text("That code is not right")).to_be_visible()
    # A fresh step (the enrolment's is spent), and past django-otp's back-off after a wrong code.
    time_machine.move_to(next_step_starts() + timedelta(seconds=1.2))
    give_code(page, totp_code(secret))
    expect(page).to_have_url(re.compile(r"/dashboard$"))
    log_out(page)

    log_in(page, email)
    give_code(page, codes[0])
    expect(page).to_have_url(re.compile(r"/dashboard$"))
    log_out(page)
    log_in(page, email)
    give_code(page, codes[0])
    expect(page.get_by_text("That code is not right")).to_be_visible()
    expect(page).to_have_url(re.compile(r"/login/code$"))


def test_an_invited_viewer_joins_by_the_mailed_link_and_may_download_but_not_upload(
    page: Page, live_server: Any, settings: Any, tmp_path: Path
) -> None:
    from jobs.models import Chunk
    from jobs.worker import chunk_run
    from tests.factories import AccountFactory, issue_key

    settings.MEDIA_ROOT = tmp_path / "media"
    settings.SITE_URL = live_server.url
    account = AccountFactory(plan_code="starter")
    key = issue_key(account)
    upload = page.request.post(
        "/v1/verify/bulk",
        multipart={"file": {"name": "list.csv", "mimeType": "text/csv", "buffer": b"ann@good.com\nbob@nullmx.com\n"}},
        headers={"Authorization": f"Bearer {key}"},
    )
    job_id = upload.json()["id"]
    for chunk_id in Chunk.objects.filter(job_id=job_id).values_list("pk", flat=True):
        as_a_worker(chunk_run, chunk_id=chunk_id)

    log_in(page, account.email)
    page.get_by_role("link", name="Members").click()
    page.get_by_label("Email").fill("viewer@agency.example.com")
    page.get_by_label("Role").last.select_option("viewer")
    page.get_by_role("button", name="Send invitation").click()
    expect(page.get_by_role("status")).to_contain_text("Invitation sent to viewer@agency.example.com")
    link = re.search(r"http://\S+/invitations/\S+", mail.outbox[-1].body)
    assert link is not None
    log_out(page)

    page.goto(link.group())
    expect(page.locator("[data-invited-role]")).to_have_text("viewer")
    page.get_by_label("Password").fill("an agency's own passphrase")
    page.get_by_role("button", name="Join the account").click()
    expect(page).to_have_url(re.compile(r"/dashboard$"))
    expect(page.get_by_role("link", name="API keys")).to_have_count(0)

    assert page.goto("/jobs/new").status == 403
    expect(page.get_by_role("heading", name="Not allowed")).to_be_visible()
    page.goto(f"/jobs/{job_id}")
    with page.expect_download() as download:
        page.get_by_role("link", name="All, verdicts only").click()
    rows = Path(download.value.path()).read_text().splitlines()
    assert len(rows) == 3 and rows[0].startswith("email,")
