"""Every portal page on a 390 px phone, for each role: nothing wider than the screen (no horizontal
scrolling), the pages a role may not open included (their 403 page). The pages are the permission
table's routes (tests/test_permissions.py), so a new page is measured without being listed here.
UPDATE_DOCS_SCREENSHOTS=1 refreshes docs/images/phone-*.png."""

from __future__ import annotations

from typing import Any

from django.urls import reverse

from accounts.models import Membership, Role
from tests.accounts.test_permissions import PORTAL, sample_arguments
from tests.factories import AccountFactory, UserFactory, issue_key

# `page`: Chromium with the CSP listener, the browser tests' own fixture.
from tests.portal.test_browser import CHROMIUM, IN_CI, ROOT, UPDATE_DOCS, page, pytestmark  # noqa: F401
from tests.portal.test_browser_teams import PASSWORD, log_in

if CHROMIUM.exists() or IN_CI:
    from playwright.sync_api import Page

PHONE = {"width": 390, "height": 844}
OVERFLOW_JS = """() => {
  const width = document.documentElement.clientWidth;
  const sticksOut = (el) => el.getBoundingClientRect().right > width + 1;
  // The innermost elements that stick out, so the message names the culprit rather than its ancestors.
  const wide = [...document.querySelectorAll("body *")].filter((el) => sticksOut(el)
    && ![...el.children].some(sticksOut)
  ).map((el) => `${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}.${el.className}`);
  return {scroll: document.documentElement.scrollWidth, width, wide: wide.slice(0, 5)};
}"""
# Screenshots of these pages at 390 px go to docs/images/phone-<name>.png.
DOC_PAGES = {"dashboard", "keys", "members", "jobs", "job-new", "billing"}


class Persona:
    """tests.conftest.Persona's shape, for sample_arguments: the account and (unused) a key."""

    def __init__(self, account: Any) -> None:
        self.account = account


def phone_pages(owner: Persona) -> list[tuple[str, str]]:
    """(name, URL) of every portal page a browser GETs, with a real object of the account for each parameter."""
    pages = []
    for name, _, params in PORTAL:
        pages.append((name, reverse(name, kwargs=sample_arguments(owner, params))))  # type: ignore[arg-type]
    return pages


def overflow(page: Page, url: str) -> dict[str, Any] | None:
    head = page.request.get(url, max_redirects=0)
    if head.status == 405 or "text/html" not in (head.headers.get("content-type") or ""):
        return None  # a POST-only action or a download: no page to fit
    page.goto(url)
    measured: dict[str, Any] = page.evaluate(OVERFLOW_JS)
    return measured if measured["scroll"] > measured["width"] else None


def test_every_portal_page_fits_a_390_px_phone_for_each_role(page: Page) -> None:
    account = AccountFactory(plan_code="starter", credits=1000)
    issue_key(account)  # the key sample_arguments shows on /keys/<id>/revoke
    owner = Persona(account)
    pages = phone_pages(owner)
    page.set_viewport_size(PHONE)
    too_wide: dict[str, Any] = {}
    for role in Role:
        user = account.owner if role == Role.OWNER else UserFactory()
        if role != Role.OWNER:
            Membership.objects.create(account=account, user=user, role=role)
        page.context.clear_cookies()
        log_in(page, user.email, PASSWORD)
        for name, url in pages:
            if wide := overflow(page, url):
                too_wide[f"{role} {name} {url}"] = wide
            if UPDATE_DOCS and role == Role.OWNER and name in DOC_PAGES:
                page.screenshot(path=str(ROOT / "docs" / "images" / f"phone-{name}.png"), full_page=True)
    assert not too_wide, "wider than the phone:\n" + "\n".join(f"{k}: {v}" for k, v in sorted(too_wide.items()))


EVALUATION_IMAGE = ROOT / "docs" / "images" / "upload-evaluation.png"
PHONE_EVALUATION_IMAGE = ROOT / "docs" / "images" / "phone-upload-evaluation.png"


def test_a_free_account_evaluates_a_10000_row_list_on_a_desktop_and_a_phone(page: Page) -> None:
    from playwright.sync_api import expect

    from tests.jobs.test_evaluation import mixed_list

    account = AccountFactory(plan_code="free", credits=100)
    log_in(page, account.owner.email, PASSWORD)
    for viewport, image in (({"width": 1280, "height": 900}, EVALUATION_IMAGE), (PHONE, PHONE_EVALUATION_IMAGE)):
        page.set_viewport_size(viewport)
        page.goto("/jobs/new")
        file = {"name": "crm.csv", "mimeType": "text/csv", "buffer": mixed_list(10_000)}
        page.get_by_label("CSV file").set_input_files(file)  # type: ignore[arg-type]
        expect(page.locator("[data-estimate-share=valid]")).to_be_visible(timeout=10_000)
        expect(page.get_by_role("link", name="Upgrade to clean this list")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
        if UPDATE_DOCS:
            page.locator("#preview").screenshot(path=str(image))
    account.refresh_from_db()
    assert account.credit_balance == 100
