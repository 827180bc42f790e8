"""Deep mode in a real Chromium, as a new customer tries it against the MX farm: verify one address
deep on the portal, upload a deep CSV, watch its job finish, download it. With
UPDATE_DOCS_SCREENSHOTS=1 the pictures of docs/deep.md are refreshed."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.support.browser import (
    BROWSER,
    CHROMIUM,
    IN_CI,
    ROOT,
    UPDATE_DOCS,
    drop_file,
    run_chunks_watching,
    settled,
    snap,
)
from tests.support.mx_farm import MxFarm

DEEP_VERIFY_IMAGE = ROOT / "docs" / "images" / "deep-verify.png"
DEEP_JOB_IMAGE = ROOT / "docs" / "images" / "deep-job.png"
EMAIL = "deep-browser@company.example.com"

pytestmark = BROWSER

if CHROMIUM.exists() or IN_CI:
    from playwright.sync_api import Page, expect


def test_new_customer_verifies_deep_and_runs_a_deep_job(
    page: Page,
    live_server: Any,
    settings: Any,
    tmp_path: Path,
    deep_farm: MxFarm,
) -> None:
    from accounts.models import Account, Plan

    settings.MEDIA_ROOT = tmp_path / "media"
    settings.SITE_URL = live_server.url
    settings.BULK_CHUNK_SIZE = 2
    settings.BULK_DEEP_DEFAULT_ROWS_PER_SECOND = 0.5
    page.goto("/")
    page.get_by_role("link", name="Sign up free").click()
    page.get_by_label("Email").fill(EMAIL)
    page.get_by_label("Password").fill("a-long-unusual-passphrase")
    page.get_by_role("button", name="Create account").click()
    expect(page).to_have_url(re.compile(r"/dashboard$"))
    from django.core import mail

    confirm = re.search(r"http://\S+/signup/confirm/\S+", mail.outbox[-1].body)  # the free credits wait for it
    assert confirm is not None
    page.goto(confirm.group())
    expect(page.locator("[data-confirmed]")).to_be_visible()

    page.goto("/verify")
    page.get_by_label("Email address").fill("alice@mailbox.deepfarm.net")
    page.get_by_role("radio", name=re.compile("Deep: also ask")).check()
    page.get_by_role("button", name=re.compile("^Verify")).click()
    expect(page.locator("[data-verdict-status]")).to_have_text("valid")
    expect(page.locator("[data-validation-mode]")).to_have_text("deep")
    expect(page.get_by_text("Mailbox accepted (SMTP): yes")).to_be_visible()
    snap(page, "30-deep-verify")
    if UPDATE_DOCS:
        page.screenshot(path=str(DEEP_VERIFY_IMAGE), full_page=True)

    Account.objects.filter(owner__email=EMAIL).update(plan=Plan.objects.get(code="starter"))
    page.goto("/jobs/new")
    page.get_by_role("radio", name=re.compile("Deep: also ask")).check()
    rows = "email\nalice@mailbox.deepfarm.net\nnobody@mailbox.deepfarm.net\nwho@anything.deepfarm.net\n"
    drop_file(page, "deep.csv", rows + "alice@listed.deepfarm.net\n")
    settled(page)
    # The estimate follows the mode, chosen before or after the file (deep: 4 rows at 0.5 rows/s).
    expect(page.get_by_text("About 8 s once it starts.")).to_be_visible()
    page.get_by_role("radio", name=re.compile("Fast: syntax")).check()
    expect(page.get_by_text("About 1 s once it starts.")).to_be_visible()
    page.get_by_role("radio", name=re.compile("Deep: also ask")).check()
    expect(page.get_by_text("About 8 s once it starts.")).to_be_visible()
    settled(page)
    page.get_by_role("button", name="Verify 4 addresses").click()
    expect(page).to_have_url(re.compile(r"/jobs/job_[A-Za-z0-9]+$"))
    expect(page.locator("[data-validation-mode]")).to_have_text("Deep check: each mailbox asked of its mail server")
    run_chunks_watching(page, page.url.rsplit("/", 1)[1])
    expect(page.locator("[data-job-status]")).to_have_text("Completed")
    expect(page.get_by_text("No such mailbox")).to_be_visible()
    snap(page, "31-deep-job")
    if UPDATE_DOCS:
        page.screenshot(path=str(DEEP_JOB_IMAGE), full_page=True)
    with page.expect_download() as download:
        page.get_by_role("link", name=re.compile("^All")).first.click()
    lines = Path(download.value.path()).read_text().splitlines()
    assert len(lines) == 5 and "smtp_valid" in lines[0]
