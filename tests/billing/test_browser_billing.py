"""Billing in a real Chromium against localstripe: sign up, buy 10,000 credits with the test card and
see them on the dashboard, verify, switch to Starter (its invoice also delivered by localstripe's
webhook, signed as Stripe signs), and see a declined card's message. UPDATE_DOCS_SCREENSHOTS=1
refreshes docs/images/pricing.png, billing.png, plan-confirm.png and receipt.png."""

from __future__ import annotations

import re

import pytest

from billing.models import StripeEvent
from tests.billing.conftest import balance_and_ledger
from tests.support.browser import BROWSER, CHROMIUM, IN_CI, ROOT, UPDATE_DOCS, snap, type_card
from tests.support.localstripe import CARD_DECLINED_ON_SAVE, CARD_OK
from tests.support.waiting import wait_until

pytestmark = BROWSER
if CHROMIUM.exists() or IN_CI:
    from playwright.sync_api import Page, expect

PRICING_IMAGE = ROOT / "docs" / "images" / "pricing.png"
BILLING_IMAGE = ROOT / "docs" / "images" / "billing.png"
PLAN_CONFIRM_IMAGE = ROOT / "docs" / "images" / "plan-confirm.png"
RECEIPT_IMAGE = ROOT / "docs" / "images" / "receipt.png"


@pytest.mark.usefixtures("webhook_to_live_server")
def test_buy_credits_verify_switch_plan_and_a_declined_card(page: Page) -> None:
    page.goto("/")
    expect(page.locator("#pricing [data-pack=pack_10k]")).to_contain_text("$7.00")
    if UPDATE_DOCS:
        page.locator("#pricing").screenshot(path=str(PRICING_IMAGE))
    page.get_by_role("link", name="Sign up free").click()
    page.get_by_label("Email").fill("buyer@company.example.com")
    page.get_by_label("Password").fill("a-long-unusual-passphrase")
    page.get_by_role("button", name="Create account").click()
    expect(page.locator("#credit-balance")).to_have_text("0")  # sign-up credits wait for a confirmed address

    page.get_by_role("link", name="Billing").click()
    page.locator("[data-pack=pack_10k]").get_by_role("button", name="Buy").click()
    expect(page).to_have_url(re.compile(r"/billing/card\?pack=pack_10k$"))
    type_card(page, CARD_OK)
    snap(page, "billing-01-card")
    page.get_by_role("button", name="Pay $70").click()
    expect(page).to_have_url(re.compile(r"/dashboard$"))
    expect(page.locator("#credit-balance")).to_have_text("10,000")
    expect(page.get_by_text("10,000 credits added ($70.00)")).to_be_visible()

    page.get_by_role("link", name="Verify", exact=True).click()
    page.get_by_label("Email address").fill("jane@good.com")
    page.get_by_role("button", name="Verify").click()
    expect(page.locator("[data-verdict-status]")).to_have_text("valid")

    page.get_by_role("link", name="Billing").click()
    page.get_by_label("Switch to").select_option("starter")
    page.get_by_role("button", name="Switch plan").click()
    expect(page.locator("[data-charged-now]")).to_have_text("$29")  # asked once, before anything is paid
    expect(page.locator("[data-next-date]")).to_contain_text("$29")
    if UPDATE_DOCS:
        page.screenshot(path=str(PLAN_CONFIRM_IMAGE), full_page=True)
    page.get_by_role("button", name=re.compile("Pay .* and switch")).click()
    expect(page.get_by_text("You are on Starter now.")).to_be_visible()
    expect(page.locator("[data-renewal-date]")).to_contain_text("Renews on")
    expect(page.locator("[data-plan-name]")).to_have_text("Starter")
    expect(page.locator("[data-credit-balance]")).to_have_text("14,999")
    # localstripe delivers the invoice's event too, a second later: already granted, so nothing more.
    wait_until(
        lambda: StripeEvent.objects.filter(type="invoice.payment_succeeded").exists(), "the invoice's webhook", 15
    )
    assert StripeEvent.objects.get(type="invoice.payment_succeeded").outcome == "already"
    account = StripeEvent.objects.get(type="invoice.payment_succeeded").account
    assert balance_and_ledger(account) == (14_999, 14_999)
    page.reload()
    if UPDATE_DOCS:
        page.screenshot(path=str(BILLING_IMAGE), full_page=True)
    snap(page, "billing-02-billing")
    page.get_by_label("Billing name").fill("Company Example Ltd")
    page.get_by_label("Billing address").fill("1 Example Street\nLondon")
    page.get_by_role("button", name="Save billing details").click()
    page.locator("[data-payment=succeeded] [data-receipt-link]").last.click()
    expect(page.locator("[data-receipt-what]")).to_have_text("10,000 credits")
    expect(page.locator("[data-billed-to]")).to_contain_text("Company Example Ltd")
    if UPDATE_DOCS:
        page.screenshot(path=str(RECEIPT_IMAGE), full_page=True)
    page.go_back()

    page.get_by_role("link", name="Replace card").click()
    type_card(page, CARD_DECLINED_ON_SAVE)
    page.get_by_role("button", name="Save card").click()
    expect(page.locator("[data-card-error]")).to_have_text("Your card was declined.")
    snap(page, "billing-03-declined")
    page.get_by_role("link", name="Jobs").click()
    page.get_by_role("link", name=re.compile("New job|Upload")).first.click()
    expect(page.get_by_text("(yours: Starter)")).to_be_visible()  # bulk lists are open now
