"""The staff side in a real Chromium: granting credits and reading the ledger in the admin, every admin
page under the Content-Security-Policy, and the staff dashboard's figures."""

from __future__ import annotations

import os
import re
from typing import Any

from tests.support.browser import (
    BROWSER,
    CHROMIUM,
    IN_CI,
    ROOT,
    log_in_to_the_admin,
    snap,
)

pytestmark = BROWSER

if CHROMIUM.exists() or IN_CI:
    from playwright.sync_api import Page, expect


def test_staff_grant_credits_in_the_admin(page: Page, live_server: Any) -> None:
    from tests.factories import AccountFactory

    AccountFactory(owner__email="customer@company.example.com", credits=10)
    log_in_to_the_admin(page)
    page.goto("/admin/accounts/account/")
    snap(page, "20-admin-accounts")
    page.get_by_role("checkbox", name="Select this object for an action").first.check()
    page.locator("select[name=action]").select_option("grant_credits")
    page.get_by_role("button", name="Run").click()
    page.get_by_label("Credits to grant").fill("500")
    page.get_by_label("Reason").fill("Conference voucher")
    snap(page, "21-admin-grant-credits")
    page.get_by_role("button", name="Grant credits").click()
    expect(page.get_by_text("Granted 500 credits to 1 account(s).")).to_be_visible()
    expect(page.locator("td.field-credit_balance")).to_have_text("510")


def test_the_admin_ledger_shows_every_column_at_1280_pixels(page: Page, live_server: Any) -> None:
    from billing.services import credits_reserve
    from tests.factories import AccountFactory

    account = AccountFactory(owner__email="customer-with-a-long-address@company.example.com", credits=10)
    note = "a-customer-export-with-a-long-file-name-2026-11-24.csv (job job_AbCdEfGhIjKlMnOpQrStUvWx, part 1)"
    credits_reserve(account=account, wanted=5, reference="job_AbCdEfGhIjKlMnOpQrStUvWx:chunk:0", note=note)
    page.set_viewport_size({"width": 1280, "height": 800})
    log_in_to_the_admin(page)
    page.goto("/admin/billing/ledgerentry/")
    expect(page.locator("td.field-description").first).to_have_text(note)
    overflow = page.evaluate(
        "() => { const r = document.querySelector('.results'); return r.scrollWidth - r.clientWidth; }"
    )
    assert overflow <= 0, f"the ledger's table is {overflow} px wider than its box: its last columns are cut"


def test_every_admin_list_and_add_page_keeps_to_the_content_security_policy(page: Page) -> None:
    from tests.factories import AccountFactory

    AccountFactory(owner__email="customer@company.example.com", credits=10)
    log_in_to_the_admin(page)
    lists = page.locator("#content-main a[href$='/']").evaluate_all("links => links.map(a => a.pathname)")
    adds = page.locator("#content-main a.addlink").evaluate_all("links => links.map(a => a.pathname)")
    assert len(lists) >= 8 and len(adds) >= 1
    for path in dict.fromkeys([*lists, *adds, "/admin/accounts/account/1/change/", "/admin/password_change/"]):
        response = page.goto(path)
        assert response is not None and response.status == 200, path
        # A violation event is a queued task: one more turn of the page's loop delivers any still due.
        page.evaluate("() => new Promise((resolve) => setTimeout(resolve))")


STAFF_DASHBOARD_IMAGE = ROOT / "docs" / "images" / "staff-dashboard.png"


def test_staff_dashboard_shows_each_figure_of_the_data(page: Page) -> None:
    from tests.support import business

    business.build()
    log_in_to_the_admin(page)
    page.get_by_role("link", name=re.compile("^Dashboard")).click()
    expect(page).to_have_url(re.compile(r"/admin/dashboard/$"))
    for name, value in business.EXPECTED.items():
        expect(page.locator(f'[data-figure="{name}"]')).to_have_text(value)
    expect(page.locator('[data-figure="running-out"]')).to_have_count(1)
    expect(page.locator('[data-figure="top-account"]').first).to_contain_text("alice@shop.example.com")
    expect(page.locator("svg rect.ops-bar")).to_have_count(30)
    snap(page, "14-staff-dashboard")
    if os.environ.get("UPDATE_DOCS_SCREENSHOTS") == "1":  # refresh README's picture on purpose only
        page.screenshot(path=str(STAFF_DASHBOARD_IMAGE), full_page=True)
    page.locator('[data-figure="jobs-failed"]').click()
    expect(page).to_have_url(re.compile(r"/admin/jobs/job/\?status__exact=failed"))
    expect(page.locator("#result_list tbody tr")).to_have_count(1)
