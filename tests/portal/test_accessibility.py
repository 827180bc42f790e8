"""axe-core in Chromium over the portal, the staff dashboard and the admin: no serious or critical
finding on any page.

axe-core comes from the `axe-playwright-python` package (requirements-dev.txt), which bundles its
`axe.min.js`; it is evaluated in each page as it stands (after htmx has settled). Every finding,
whatever its impact, is printed (`-s`) for a human to read; serious and critical ones fail.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser import CHROMIUM, IN_CI, drop_file, log_in_to_the_admin, run_chunks_watching, settled

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists() and not IN_CI,
        reason=f"{CHROMIUM} is missing (apt-get install chromium); set CI=true to make this a failure",
    ),
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

if CHROMIUM.exists() or IN_CI:
    from axe_playwright_python.sync_playwright import Axe
    from playwright.sync_api import Page, expect

FAILING_IMPACTS = frozenset({"serious", "critical"})
CUSTOMER = "a11y@company.example.com"
PASSWORD = "correct horse battery staple"  # tests/factories.py's


def findings(page: Page, name: str, seen: dict[str, list[str]]) -> None:
    """axe's violations on the page as it is now, kept under `name` as 'impact rule: targets'."""
    settled(page)
    response = Axe().run(page).response
    seen[name] = [
        f"{violation['impact']} {violation['id']}: "
        + ", ".join(" ".join(node["target"]) for node in violation["nodes"])
        for violation in response["violations"]
    ]


def test_no_page_has_a_serious_or_critical_axe_finding(
    page: Page, live_server: Any, settings: Any, tmp_path: Path
) -> None:
    from tests.factories import AccountFactory

    settings.MEDIA_ROOT = tmp_path / "media"
    settings.SITE_URL = live_server.url
    seen: dict[str, list[str]] = {}
    account = AccountFactory(owner__email=CUSTOMER, credits=100)
    for name, path in (("landing", "/"), ("sign-up", "/signup"), ("sign-in", "/login")):
        page.goto(path)
        findings(page, name, seen)
    page.get_by_label("Email").fill(CUSTOMER)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(re.compile(r"/dashboard$"))
    findings(page, "dashboard", seen)
    portal_pages(page, seen)
    job_pages(page, seen)
    staff_pages(page, seen, account.pk)
    report = "\n".join(f"{name}: {found or 'none'}" for name, found in seen.items())
    print(f"axe-core findings on {len(seen)} pages:\n{report}")  # for -s
    failing = {name: [f for f in found if f.split(" ", 1)[0] in FAILING_IMPACTS] for name, found in seen.items()}
    assert len(seen) >= 15
    assert not any(failing.values()), {name: found for name, found in failing.items() if found}


def portal_pages(page: Page, seen: dict[str, list[str]]) -> None:
    page.goto("/verify")
    page.get_by_label("Email address").fill("jane@good.com")
    page.get_by_role("button", name="Verify (1 credit)").click()
    expect(page.locator("[data-verdict-status]")).to_have_text("valid")
    findings(page, "verify (with a verdict)", seen)
    for name, path in (
        ("API keys", "/keys"),
        ("signing secret", "/settings/signing-secret"),
        ("billing", "/billing"),
        ("team", "/members"),
        ("account security", "/settings/security"),
        ("audit log", "/settings/audit"),
        ("jobs list, empty", "/jobs"),
    ):
        page.goto(path)
        findings(page, name, seen)


def job_pages(page: Page, seen: dict[str, list[str]]) -> None:
    page.goto("/jobs/new")
    findings(page, "new job", seen)
    drop_file(page, "contacts.csv", "email\nann@good.com\nbob@nullmx.com\ninfo@good.com\n")
    expect(page.locator("[data-preview-count=unique]")).to_have_text("3")
    findings(page, "new job, its preview", seen)
    page.get_by_role("button", name="Verify 3 addresses").click()
    expect(page).to_have_url(re.compile(r"/jobs/job_[A-Za-z0-9]+$"))
    findings(page, "job page, running", seen)
    job_url = page.url
    run_chunks_watching(page, job_url.rsplit("/", 1)[1])
    expect(page.locator("[data-job-status]")).to_have_text("Completed")
    findings(page, "job page, completed", seen)
    page.goto("/jobs")
    findings(page, "jobs list", seen)
    # Opened by its URL rather than with the browser's Back: a Back issued while the previous
    # navigation (here the delete's redirect) is still under way fails in Chromium with "Not
    # attached to an active page".
    page.goto(job_url)
    page.get_by_text("Delete this job…").click()
    page.get_by_role("button", name="Yes, delete contacts.csv").click()
    expect(page.get_by_role("status")).to_contain_text("Deleted contacts.csv")
    page.goto(job_url)  # an old link to it
    expect(page.get_by_role("heading", name="This job was deleted")).to_be_visible()
    findings(page, "deleted job page", seen)


def staff_pages(page: Page, seen: dict[str, list[str]], account_id: int) -> None:
    page.context.clear_cookies()
    log_in_to_the_admin(page)
    for name, path in (
        ("admin home", "/admin/"),
        ("staff dashboard", "/admin/dashboard/"),
        ("admin changelist: accounts", "/admin/accounts/account/"),
        ("admin change form: an account", f"/admin/accounts/account/{account_id}/change/"),
        ("admin changelist: ledger", "/admin/billing/ledgerentry/"),
        ("admin changelist: jobs", "/admin/jobs/job/"),
    ):
        page.goto(path)
        findings(page, name, seen)
