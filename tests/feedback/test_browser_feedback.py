"""As a new user would, in a real Chromium: copy the SendGrid URL from the Feedback page, post the
documented sample to it, and see the verdict change on the Verify page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.utils import timezone

from tests.support.browser import BROWSER, CHROMIUM, IN_CI, log_in, snap

pytestmark = BROWSER

if CHROMIUM.exists() or IN_CI:
    from playwright.sync_api import Page, expect

SAMPLE = Path(__file__).parent.parent / "fixtures" / "feedback" / "sendgrid_events.json"


def test_a_sendgrid_bounce_posted_to_the_url_the_portal_shows_changes_the_verdict(
    page: Page, live_server: Any, settings: Any
) -> None:
    from tests.factories import AccountFactory

    settings.SITE_URL = live_server.url  # the URLs the page shows point at this server
    email = AccountFactory().email
    log_in(page, email)
    page.goto("/verify")
    page.get_by_label("Email address").fill("jane@good.com")
    page.get_by_role("button", name="Verify").click()
    expect(page.locator("[data-verdict-status]")).to_have_text("valid")
    page.get_by_role("link", name="Feedback").click()
    url = page.locator('[data-webhook="sendgrid"] code').inner_text()
    snap(page, "40-feedback-page")
    events = [
        e | {"email": "jane@good.com", "timestamp": int(timezone.now().timestamp())}
        for e in json.loads(SAMPLE.read_text())
    ]
    answer = page.request.post(url, data=json.dumps(events), headers={"Content-Type": "application/json"})
    assert answer.ok and answer.json() == {"accepted": 4, "ignored": 4}
    page.goto("/verify")
    page.get_by_label("Email address").fill("jane@good.com")
    page.get_by_role("button", name="Verify").click()
    expect(page.locator("[data-verdict-status]")).to_have_text("invalid")
    expect(page.locator('[data-feedback="hard_bounce"]')).to_contain_text("hard bounce")
    snap(page, "41-verdict-after-feedback")
