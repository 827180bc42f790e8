"""A paying customer's first day, in one go from an empty database, on a desktop and on a 390 px
phone (issue 32): sign up, confirm the address from the mail, evaluate a list for free, buy a pack
(localstripe), take a plan seeing its renewal date, download the receipt (the page and the PDF),
upload a CRM export with repeated addresses and download it back whole. Every page on the way fits
the screen: no horizontal scrolling, and every table's cells and actions in view.
UPDATE_DOCS_SCREENSHOTS=1 saves each step to docs/images/first-day/<screen>-<step>.png.
"""

from __future__ import annotations

import re
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
from django.core import mail
from pypdf import PdfReader

from accounts.models import Account
from billing.models import Payment
from tests.billing.conftest import localstripe, stripe_live, stripe_on, webhook_to_live_server  # noqa: F401
from tests.support.browser import (
    BROWSER,
    CHROMIUM,
    IN_CI,
    ROOT,
    TABLES_JS,
    UPDATE_DOCS,
    drop_file,
    run_chunks_watching,
    settled,
    type_card,
)
from tests.support.bulk_jobs import mixed_list
from tests.support.localstripe import CARD_OK

pytestmark = BROWSER

if CHROMIUM.exists() or IN_CI:
    from playwright.sync_api import Page, ViewportSize, expect

IMAGES = ROOT / "docs" / "images" / "first-day"
SCREENS: dict[str, ViewportSize] = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}
EMAIL = "maria@shop.example.com"
# A CRM export: two people share Ann's address (the second in capitals), Bob's is a dead domain.
NEWSLETTER = (
    "email,first_name\nann@good.com,Ann\nbob@nullmx.com,Bob\ninfo@good.com,Info\ncid@good.com,Cid\nANN@good.com,Annie\n"
)


class Walk:
    """The page and its screen: each step checks the page fits, then (on purpose only) pictures it."""

    def __init__(self, page: Page, screen: str) -> None:
        self.page, self.screen = page, screen

    def step(self, name: str) -> None:
        width = self.page.evaluate("document.documentElement.clientWidth")
        scroll = self.page.evaluate("document.documentElement.scrollWidth")
        assert scroll <= width, f"{self.screen} {name} ({self.page.url}): {scroll} px wide on a {width} px screen"
        out_of_view = self.page.evaluate(TABLES_JS)  # every table's cells and actions in view
        assert not out_of_view, f"{self.screen} {name} ({self.page.url}): tables that do not fit: {out_of_view}"
        if UPDATE_DOCS:
            IMAGES.mkdir(parents=True, exist_ok=True)
            self.page.screenshot(path=str(IMAGES / f"{self.screen}-{name}.png"), full_page=True)


@pytest.mark.parametrize("screen", SCREENS)
@pytest.mark.usefixtures("stripe_live", "webhook_to_live_server")
def test_a_new_customers_first_day(page: Page, screen: str, live_server: Any, settings: Any, tmp_path: Path) -> None:
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.SITE_URL = live_server.url
    page.set_viewport_size(SCREENS[screen])
    walk = Walk(page, screen)
    sign_up_and_confirm(walk)
    evaluate_a_list(walk)
    buy_a_pack(walk)
    take_a_plan(walk)
    download_the_receipt(walk)
    upload_and_download(walk)


def sign_up_and_confirm(walk: Walk) -> None:
    page = walk.page
    page.goto("/")
    walk.step("01-landing")
    page.get_by_role("link", name="Sign up free").first.click()
    page.get_by_label("Email").fill(EMAIL)
    page.get_by_label("Password").fill("a-long-unusual-passphrase")
    walk.step("02-signup")
    page.get_by_role("button", name="Create account").click()
    expect(page.locator("#credit-balance")).to_have_text("0")  # the free credits come with the link
    walk.step("03-dashboard-unconfirmed")
    [confirmation] = [message for message in mail.outbox if message.to == [EMAIL]]
    link = re.search(r"http://\S+/signup/confirm/\S+", str(confirmation.body))
    assert link is not None
    page.goto(link.group())
    expect(page.locator("[data-confirmed]")).to_be_visible()
    walk.step("04-confirmed")
    page.get_by_role("link", name="Go to the dashboard").click()
    expect(page.locator("#credit-balance")).to_have_text("100")
    walk.step("05-dashboard")


def evaluate_a_list(walk: Walk) -> None:
    """A free account: the preview and its quality estimate, no credit moving, and the way to upgrade."""
    page = walk.page
    page.get_by_role("link", name="Jobs").click()
    page.get_by_role("link", name=re.compile("Upload a list|Evaluate a list")).first.click()
    file = {"name": "crm.csv", "mimeType": "text/csv", "buffer": mixed_list(2_000)}
    page.get_by_label("CSV file").set_input_files(file)  # type: ignore[arg-type]
    expect(page.locator("[data-estimate-share=valid]")).to_be_visible()
    expect(page.locator("[data-estimate-basis]")).to_contain_text("No credit is used")
    walk.step("06-evaluation")
    assert Account.objects.get(owner__email=EMAIL).credit_balance == 100
    page.get_by_role("link", name="Upgrade to clean this list").click()
    expect(page).to_have_url(re.compile(r"/billing$"))


def buy_a_pack(walk: Walk) -> None:
    page = walk.page
    walk.step("07-billing-free")
    page.locator("[data-pack=pack_1k]").get_by_role("button", name="Buy").click()
    expect(page).to_have_url(re.compile(r"/billing/card\?pack=pack_1k$"))
    type_card(page, CARD_OK)
    walk.step("08-card")
    page.get_by_role("button", name="Pay $10").click()
    expect(page).to_have_url(re.compile(r"/dashboard$"))
    expect(page.locator("#credit-balance")).to_have_text("1,100")
    walk.step("09-dashboard-paid")


def take_a_plan(walk: Walk) -> None:
    page = walk.page
    page.get_by_role("link", name="Billing").click()
    page.get_by_label("Switch to").select_option("starter")
    page.get_by_role("button", name="Switch plan").click()
    expect(page.locator("[data-charged-now]")).to_have_text("$29")
    expect(page.locator("[data-next-date]")).to_contain_text("$29")
    walk.step("10-plan-confirm")
    page.get_by_role("button", name=re.compile("Pay .* and switch")).click()
    expect(page.get_by_text("You are on Starter now.")).to_be_visible()
    expect(page.locator("[data-renewal-date]")).to_contain_text("Renews on")
    expect(page.locator("[data-plan-name]")).to_have_text("Starter")
    page.get_by_label("Billing name").fill("Maria's Shop Ltd")
    page.get_by_label("Billing address").fill("1 Market Street\nLeeds LS1 1AA")
    page.get_by_role("button", name="Save billing details").click()
    expect(page.get_by_text("Billing details saved")).to_be_visible()
    walk.step("11-billing-starter")


def download_the_receipt(walk: Walk) -> None:
    page = walk.page
    first = Payment.objects.filter(account__owner__email=EMAIL).earliest("pk")
    page.locator(f"a[data-receipt-link][href='/billing/receipts/{first.pk}']").click()
    expect(page.locator("[data-receipt-number]")).to_have_text(first.number)
    expect(page.locator("[data-receipt-what]")).to_have_text("1,000 credits")
    expect(page.locator("[data-billed-to]")).to_contain_text("Maria's Shop Ltd")
    walk.step("12-receipt")
    with page.expect_download() as download:
        page.get_by_role("link", name="Download PDF").click()
    assert download.value.suggested_filename == f"receipt-{first.number}.pdf"
    text = PdfReader(BytesIO(Path(download.value.path()).read_bytes())).pages[0].extract_text()
    for fact in (first.number, "1,000 credits", "$10.00", "Maria's Shop Ltd", "1 Market Street", EMAIL):
        assert fact in text


def upload_and_download(walk: Walk) -> None:
    page = walk.page
    page.goto("/jobs")
    page.get_by_role("link", name="Upload a list").first.click()
    drop_file(page, "newsletter.csv", NEWSLETTER)
    expect(page.locator("[data-preview-count=unique]")).to_have_text("4")
    settled(page)
    expect(page.locator("[data-preview-count=rows]")).to_have_text("5")
    expect(page.locator("[data-preview-duplicates]")).to_contain_text("charged once")
    walk.step("13-upload-preview")
    page.get_by_role("button", name="Verify 4 addresses").click()
    expect(page).to_have_url(re.compile(r"/jobs/job_[A-Za-z0-9]+$"))
    run_chunks_watching(page, page.url.rsplit("/", 1)[1])
    expect(page.locator("[data-job-status]")).to_have_text("Completed")
    walk.step("14-job")
    expect(page.locator("[data-downloads-explained]")).to_contain_text("every row of it")
    with page.expect_download() as download:
        page.get_by_role("link", name="Safe to send, with your columns").click()
    rows = Path(download.value.path()).read_text().splitlines()
    assert rows[0].startswith("email,first_name,verifier_email,verifier_status,")
    assert sorted(row.split(",")[0] for row in rows[1:]) == ["ANN@good.com", "ann@good.com", "cid@good.com"]
    with page.expect_download() as download:  # the whole file back: every contact, in its order
        page.get_by_role("link", name="All, with your columns").click()
    rows = [row.split(",") for row in Path(download.value.path()).read_text().splitlines()]
    assert [(row[1], row[-1]) for row in rows[1:]] == [
        ("Ann", ""),
        ("Bob", ""),
        ("Info", ""),
        ("Cid", ""),
        ("Annie", "2"),  # the same address as row 2, with its verdict
    ]
    assert rows[5][3] == rows[1][3] == "valid"
