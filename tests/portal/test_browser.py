"""The portal in a real Chromium: sign up, create a key, verify, rotate the secret, revoke the key,
upload a list and watch its job finish.

And the API reference's page. Chromium and its `page`: tests/support/browser.py. Screenshots of each
main page go to test-artifacts/screenshots/ for a human look.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

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

JOB_PAGE_IMAGE = ROOT / "docs" / "images" / "job-page.png"
PREVIEW_IMAGE = ROOT / "docs" / "images" / "upload-preview.png"
PARTIAL_IMAGE = ROOT / "docs" / "images" / "job-partial.png"
NO_ADDRESSES_IMAGE = ROOT / "docs" / "images" / "upload-preview-no-addresses.png"
DELETED_IMAGE = ROOT / "docs" / "images" / "job-deleted.png"
JOURNEY_EMAIL = "browser@company.example.com"
# A CRM export with no `email` header: by content, the sales rep's column (first of two equally full) is picked.
CRM_ROWS = (
    "Name,Owner,Personal\n"
    "Ann,rep@good.com,ann@good.com\nBob,rep@good.com,bob@nullmx.com\nInfo,rep@good.com,info@good.com\n"
)
RAW_KEY = re.compile(r"ev_live_[A-Za-z0-9]{32}")

pytestmark = BROWSER


if CHROMIUM.exists() or IN_CI:
    from playwright.sync_api import Page, expect


def api_verify(page: Page, key: str) -> int:
    response = page.request.post(
        "/v1/verify", data={"email": "jane@good.com"}, headers={"Authorization": f"Bearer {key}"}
    )
    return response.status


def test_customer_journey_through_the_portal(page: Page, live_server: Any, settings: Any, tmp_path: Path) -> None:
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.SITE_URL = live_server.url  # the signed download URL must point at this server
    settings.BULK_CHUNK_SIZE = 1  # one chunk per row: the bar moves in visible steps
    page.goto("/")
    snap(page, "01-landing")
    page.get_by_role("link", name="Sign up free").click()
    page.get_by_label("Email").fill(JOURNEY_EMAIL)
    page.get_by_label("Password").fill("a-long-unusual-passphrase")
    snap(page, "02-signup")
    page.get_by_role("button", name="Create account").click()
    expect(page).to_have_url(re.compile(r"/dashboard$"))
    expect(page.locator("#credit-balance")).to_have_text("0")  # the free credits wait for the address
    from django.core import mail

    confirm = re.search(r"http://\S+/signup/confirm/\S+", mail.outbox[-1].body)
    assert confirm is not None
    page.goto(confirm.group())
    expect(page.locator("[data-confirmed]")).to_be_visible()
    page.get_by_role("link", name="Go to the dashboard").click()
    expect(page.locator("#credit-balance")).to_have_text("100")
    snap(page, "03-dashboard")

    page.get_by_role("link", name="API keys").click()
    page.get_by_label("Key name").fill("CI server")
    page.get_by_role("button", name="Create key").click()
    key = page.locator("[data-new-key]").input_value()
    assert RAW_KEY.fullmatch(key)
    page.get_by_role("button", name="Copy").click()
    expect(page.get_by_role("button", name="Copied")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == key
    snap(page, "04-keys-new")
    assert api_verify(page, key) == 200

    page.get_by_role("link", name="Verify", exact=True).click()
    page.get_by_label("Email address").fill("Info@Good.com")
    page.get_by_role("button", name="Verify").click()
    expect(page.locator("[data-verdict-status]")).to_have_text("risky")
    expect(page.locator("#credits-left")).to_contain_text("98")
    snap(page, "05-verify")

    page.get_by_role("link", name="API keys").click()  # the signing secret is the developers', linked from there
    page.get_by_role("link", name="Signing secret").click()
    secret = page.get_by_label("Signing secret")
    old = secret.input_value()
    expect(secret).to_have_attribute("type", "password")
    page.get_by_role("button", name="Reveal").click()
    expect(secret).to_have_attribute("type", "text")
    snap(page, "06-signing-secret")
    page.get_by_role("link", name="Rotate secret").click()
    snap(page, "07-rotate-confirm")
    page.get_by_role("button", name="Rotate secret").click()
    expect(page.get_by_role("status")).to_contain_text("New signing secret created")
    assert page.get_by_label("Signing secret").input_value() not in ("", old)

    page.get_by_role("link", name="API keys").click()
    page.get_by_role("link", name="Revoke CI server").click()
    page.get_by_role("button", name="Revoke key").click()
    expect(page.get_by_role("status")).to_contain_text("is revoked")
    expect(page.get_by_role("cell", name=re.compile("^Revoked"))).to_be_visible()
    snap(page, "08-keys-revoked")
    assert api_verify(page, key) == 401

    page.get_by_role("link", name="Billing").click()
    expect(page.get_by_role("heading", name="Credit ledger")).to_be_visible()
    snap(page, "09-billing")

    page.get_by_role("link", name="Dashboard").click()
    expect(page.get_by_role("img", name=re.compile("2 in all"))).to_be_visible()
    snap(page, "10-dashboard-usage")
    page.set_viewport_size({"width": 390, "height": 844})
    page.get_by_role("link", name="Verify", exact=True).click()
    page.get_by_label("Email address").fill("jane@gmial.com")
    page.get_by_role("button", name="Verify").click()
    expect(page.locator("[data-verdict-status]")).to_have_text("invalid")
    snap(page, "11-verify-phone")
    page.get_by_role("button", name="Verify this instead").click()
    expect(page.locator("[data-verdict-status]")).to_have_text("valid")
    expect(page.get_by_role("heading", name="jane@gmail.com")).to_be_visible()

    bulk_job_journey(page)


def bulk_job_journey(page: Page) -> None:
    from accounts.models import Account, Plan

    page.set_viewport_size({"width": 1200, "height": 900})
    Account.objects.filter(owner__email=JOURNEY_EMAIL).update(plan=Plan.objects.get(code="starter"))
    page.get_by_role("link", name="Jobs").click()
    expect(page.get_by_text("No jobs yet.")).to_be_visible()
    page.get_by_role("link", name="Upload a list").first.click()
    expect(page.get_by_text("25 MiB")).to_be_visible()
    drop_file(page, "crm-export.csv", CRM_ROWS)
    expect(page.get_by_text("Selected: crm-export.csv")).to_be_visible()
    expect(page.locator("[data-email-column]")).to_have_text("Owner")
    settled(page)  # htmx binds the new card's selector only once the swap has settled
    page.get_by_label("Email column").select_option(label="Name")  # a column of names: no address at all
    expect(page.locator("[data-preview-no-addresses]")).to_contain_text("The column “Name” holds no email address.")
    expect(page.get_by_label("Verify this column anyway")).not_to_be_checked()
    snap(page, "12-job-upload-preview-no-addresses")
    if UPDATE_DOCS:
        page.locator("[data-preview]").screenshot(path=str(NO_ADDRESSES_IMAGE))
    settled(page)
    page.get_by_label("Email column").select_option(label="Personal")
    expect(page.locator("[data-email-column]")).to_have_text("Personal")
    expect(page.locator("[data-preview-count=unique]")).to_have_text("3")
    snap(page, "12-job-upload-preview")
    if UPDATE_DOCS:
        page.locator("[data-preview]").screenshot(path=str(PREVIEW_IMAGE))
    page.get_by_role("button", name="Verify 3 addresses").click()
    expect(page).to_have_url(re.compile(r"/jobs/job_[A-Za-z0-9]+$"))
    expect(page.get_by_role("heading", name="crm-export.csv")).to_be_visible()
    bar = page.get_by_role("progressbar")
    expect(bar).to_have_attribute("aria-valuenow", "0")
    page.evaluate("window.stillTheSamePage = true")  # gone if the browser navigates or reloads
    run_chunks_watching(page, page.url.rsplit("/", 1)[1])
    expect(bar).to_have_attribute("aria-valuenow", "100")
    expect(page.locator("[data-job-status]")).to_have_text("Completed")
    expect(page.get_by_role("img", name="Statuses of the processed rows")).to_be_visible()
    expect(page.locator("[data-timing]")).to_contain_text("finished")
    expect(page.locator("[data-took]")).to_have_text(re.compile(r"^(under a second|\d+ s)$"))
    labels = page.locator(".download-label").all_inner_texts()
    assert labels == ["All", "Safe to send", "Valid + risky", "Invalid only", "Risky only"]  # each holds a row here
    assert page.evaluate("window.stillTheSamePage") is True
    snap(page, "13-job-page")
    if UPDATE_DOCS:
        page.screenshot(path=str(JOB_PAGE_IMAGE), full_page=True)
    with page.expect_download() as download:
        page.get_by_role("link", name="Safe to send, with your columns").click()
    rows = Path(download.value.path()).read_text().splitlines()
    assert rows[0].startswith("Name,Owner,Personal,verifier_email,verifier_status,")
    assert [row.split(",")[:5] for row in rows[1:]] == [
        ["Ann", "rep@good.com", "ann@good.com", "ann@good.com", "valid"]
    ]
    job_url = page.url
    page.get_by_text("Delete this job…").click()
    page.get_by_role("button", name="Yes, delete crm-export.csv").click()
    expect(page.get_by_role("status")).to_contain_text("Deleted crm-export.csv")
    expect(page.get_by_text("No jobs yet.")).to_be_visible()
    page.goto(job_url)  # an old link to it
    expect(page.get_by_role("heading", name="This job was deleted")).to_be_visible()
    expect(page.locator("[data-deleted]")).to_contain_text("crm-export.csv")
    snap(page, "13b-job-deleted")
    if UPDATE_DOCS:
        page.screenshot(path=str(DELETED_IMAGE), full_page=True)
    partial_job_journey(page)


def partial_job_journey(page: Page) -> None:
    """A list bigger than the balance: a warning, an explicit confirmation, then a job shown as Partial."""
    from accounts.models import Account

    Account.objects.filter(owner__email=JOURNEY_EMAIL).update(credit_balance=2)
    page.get_by_role("link", name="Upload a list").first.click()
    drop_file(page, "newsletter.csv", "email\nann@good.com\nbob@good.com\ncid@good.com\ndan@good.com\n")
    expect(page.get_by_text("Your balance will not cover this list.")).to_be_visible()
    page.get_by_label("Verify only what my balance covers").check()
    page.get_by_role("button", name="Verify 4 addresses").click()
    run_chunks_watching(page, page.url.rsplit("/", 1)[1])
    expect(page.locator("[data-job-status]")).to_have_text("Partial")
    expect(page.locator("[data-partial]")).to_contain_text("2 rows left unverified")
    snap(page, "14-job-partial")
    if UPDATE_DOCS:
        page.screenshot(path=str(PARTIAL_IMAGE), full_page=True)


# ReDoc lays the whole schema out in the page's one thread before the first heading shows: seconds of
# CPU that grow with the schema and with what else the machine runs (5 s was missed beside a full suite).
REDOC_RENDERED_MS = 30_000


def test_api_reference_renders_and_searches_under_the_content_security_policy(page: Page) -> None:
    response = page.goto("/v1/docs")
    assert response is not None and "'unsafe-inline'" not in response.headers["content-security-policy"]
    heading = page.get_by_role("heading", name=re.compile("Email Verification API"))
    expect(heading).to_be_visible(timeout=REDOC_RENDERED_MS)
    page.get_by_placeholder("Search...").fill("bulk")
    expect(page.locator("[role=search] li").first).to_be_visible()
    page.wait_for_load_state("networkidle")


def test_api_reference_asks_no_other_host_for_anything(page: Page, live_server: Any) -> None:
    """Nothing leaves the page: every request it makes (scripts, images, the schema, the search
    worker) goes to this server, and its policy names no other host to allow one."""
    own = urlsplit(live_server.url).netloc
    foreign: list[str] = []
    page.on("request", lambda request: foreign.append(request.url) if elsewhere(request.url, own) else None)
    response = page.goto("/v1/docs")
    heading = page.get_by_role("heading", name=re.compile("Email Verification API"))
    expect(heading).to_be_visible(timeout=REDOC_RENDERED_MS)
    expect(page.get_by_text("API docs by Redocly")).to_be_visible()  # the footer whose logo came from a CDN
    page.wait_for_load_state("networkidle")
    assert foreign == []
    assert response is not None
    assert not re.search(r"https?:|\*", response.headers["content-security-policy"])


def elsewhere(url: str, own: str) -> bool:
    """A request to another origin (blob: and data: URLs are the page's own)."""
    parts = urlsplit(url)
    return parts.scheme not in ("blob", "data") and parts.netloc != own
