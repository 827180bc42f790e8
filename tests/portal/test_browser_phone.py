"""Every portal page on a 390 px phone, for each role: nothing wider than the screen (no horizontal
scrolling), the pages a role may not open included (their 403 page). The pages are the permission
table's routes (tests/accounts/test_permissions.py), so a new page is measured without being listed here.
Every table on them, at 390 and at 1280 px, for each role (and the staff dashboard for staff): no
table wider than the room it has, so its actions and columns are in view without scrolling sideways.
UPDATE_DOCS_SCREENSHOTS=1 refreshes docs/images/phone-*.png."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.urls import reverse

from accounts.models import Membership, Role
from tests.factories import AccountFactory, UserFactory, issue_key
from tests.support.browser import BROWSER, CHROMIUM, IN_CI, PASSWORD, ROOT, TABLES_JS, UPDATE_DOCS, log_in
from tests.support.routes import PORTAL, sample_arguments

pytestmark = BROWSER

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
DESKTOP = {"width": 1280, "height": 900}
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


def each_role_signed_in(page: Page, account: Any) -> Iterator[Role]:
    """Each role in turn, the browser signed in as a member of `account` with it (the owner first)."""
    for role in Role:
        user = account.owner if role == Role.OWNER else UserFactory()
        if role != Role.OWNER:
            Membership.objects.create(account=account, user=user, role=role)
        page.context.clear_cookies()
        log_in(page, user.email, PASSWORD)
        yield role


def test_every_portal_page_fits_a_390_px_phone_for_each_role(page: Page) -> None:
    account = AccountFactory(plan_code="starter", credits=1000)
    issue_key(account)  # the key sample_arguments shows on /keys/<id>/revoke
    owner = Persona(account)
    pages = phone_pages(owner)
    page.set_viewport_size(PHONE)
    too_wide: dict[str, Any] = {}
    for role in each_role_signed_in(page, account):
        for name, url in pages:
            if wide := overflow(page, url):
                too_wide[f"{role} {name} {url}"] = wide
            if UPDATE_DOCS and role == Role.OWNER and name in DOC_PAGES:
                page.screenshot(path=str(ROOT / "docs" / "images" / f"phone-{name}.png"), full_page=True)
    assert not too_wide, "wider than the phone:\n" + "\n".join(f"{k}: {v}" for k, v in sorted(too_wide.items()))


def test_an_owners_header_on_a_390_px_phone_leaves_the_first_screen_to_the_page(page: Page) -> None:
    """Every menu entry an owner has, in two rows under the name, then the user's links (a long address
    takes two rows): the header was 290 px tall once, 173 px before the menu was tightened."""
    account = AccountFactory(plan_code="starter", credits=1000)
    # A fixed address: the factory's numbered one grows with the suite, and the user's links wrap with it.
    account.owner.email = "maria@shop.example.com"
    account.owner.save(update_fields=["email"])
    page.set_viewport_size(PHONE)
    log_in(page, account.owner.email, PASSWORD)
    page.goto(reverse("verify"))
    header = page.locator("header.site-header").bounding_box()
    assert header is not None and header["height"] <= 160, header


def tables_out_of_view(page: Page, url: str) -> list[str]:
    head = page.request.get(url, max_redirects=0)
    if head.status == 405 or "text/html" not in (head.headers.get("content-type") or ""):
        return []
    page.goto(url)
    found: list[str] = page.evaluate(TABLES_JS)
    return found


def tables_filled(account: Any) -> None:
    """What makes the account's tables wide: keys with every limit, a finished job with a long file
    name, audit events with long addresses (members come with the roles)."""
    from datetime import timedelta

    from django.utils import timezone

    from accounts.models import ApiKey, AuditEvent
    from jobs.models import Job

    limits = {"expires_at": timezone.now() + timedelta(days=30), "allowed_ips": "203.0.113.0/24\n198.51.100.7"}
    ApiKey.issue(account=account, name="Marketing site sign-up form", daily_cap=500, monthly_cap=10000, **limits)
    origins = "https://www.shop-with-a-long-name.example.com"
    ApiKey.issue(account=account, name="Widget", kind=ApiKey.Kind.PUBLISHABLE, allowed_origins=origins, scope="verify")
    Job.objects.create(
        account=account,
        total=3_000,
        processed=3_000,
        valid=2_000,
        invalid=600,
        risky=300,
        unknown=100,
        status=Job.Status.COMPLETED,
        filename="crm-export-all-contacts-2026-11-27-final-v2.csv",
        input_name="x",
        completed_at=timezone.now(),
        breakdown={"no_mx_record": 500, "disposable": 100, "did_you_mean": 14},
    )
    for action in list(AuditEvent.Action)[:6]:
        AuditEvent.objects.create(
            account=account,
            action=action,
            actor_email="someone.with.a.long.address@company.example.com",
            ip="2001:db8:85a3::8a2e:370:7334",
            detail="Marketing site sign-up form (ev_live_AbCd…), daily cap 500",
        )
    return account


def test_every_table_keeps_its_actions_and_columns_in_view_at_390_and_1280_px_for_each_role(page: Page) -> None:
    account = AccountFactory(plan_code="starter", credits=1000)
    issue_key(account)  # the key sample_arguments shows on /keys/<id>/revoke
    pages = phone_pages(Persona(account))
    tables_filled(account)
    out_of_view: list[str] = []
    for role in each_role_signed_in(page, account):
        for screen in (PHONE, DESKTOP):
            page.set_viewport_size(screen)
            for name, url in pages:
                out_of_view += [
                    f"{role} {screen['width']} px {name}: {table}" for table in tables_out_of_view(page, url)
                ]
    staff = UserFactory(is_staff=True, is_superuser=True)
    page.context.clear_cookies()
    log_in_staff(page, staff.email)
    for screen in (PHONE, DESKTOP):
        page.set_viewport_size(screen)
        out_of_view += [
            f"staff {screen['width']} px dashboard: {t}" for t in tables_out_of_view(page, "/admin/dashboard/")
        ]
    assert not out_of_view, "tables that do not fit:\n" + "\n".join(out_of_view)


def log_in_staff(page: Page, email: str) -> None:
    page.goto("/admin/login/")
    page.locator("input[name=username]").fill(email)
    page.locator("input[name=password]").fill(PASSWORD)
    page.locator("input[type=submit]").click()


EVALUATION_IMAGE = ROOT / "docs" / "images" / "upload-evaluation.png"
PHONE_EVALUATION_IMAGE = ROOT / "docs" / "images" / "phone-upload-evaluation.png"


def test_a_free_account_evaluates_a_10000_row_list_on_a_desktop_and_a_phone(page: Page) -> None:
    from playwright.sync_api import expect

    from tests.support.bulk_jobs import mixed_list

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
