"""The browser tests' Chromium (Debian's /usr/bin/chromium; Playwright's own download is not used):
one browser a test process, started by the first test that asks for a `page`, and a fresh context
(cookies, storage, permissions) with its own page for every test. Skipped without Chromium on a
laptop; under CI=true a missing Chromium fails the run. Screenshots go to test-artifacts/screenshots/.

Also the steps several browser tests take: signing in, dropping a file, watching a job's chunks run.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from django.db import connections

from tests.support.db import committed_db

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
UPDATE_DOCS = os.environ.get("UPDATE_DOCS_SCREENSHOTS") == "1"  # refresh the docs' pictures on purpose only
IN_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
PASSWORD = "correct horse battery staple"
UPLOAD_JS = """([name, rows]) => {
  const data = new DataTransfer();
  data.items.add(new File([rows], name, {type: "text/csv"}));
  return data;
}"""
# Every page reports what its Content-Security-Policy blocked; the `page` fixture fails the test on any.
CSP_LISTENER = """document.addEventListener("securitypolicyviolation", (event) => window.reportCspViolation(
  `${location.pathname}: ${event.effectiveDirective} blocked ${event.blockedURI || "inline"}`
  + ` (${event.sourceFile}:${event.lineNumber})`
));"""

# Every browser test module's marks: `pytestmark = BROWSER`.
BROWSER = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists() and not IN_CI,
        reason=f"{CHROMIUM} is missing (apt-get install chromium); set CI=true to make this a failure",
    ),
    # live_server needs committed data; serialized rollback restores the plans afterwards.
    committed_db,
]

if CHROMIUM.exists() or IN_CI:
    from playwright.sync_api import Browser, Page, expect, sync_playwright


@pytest.fixture(scope="session")
def chromium() -> Iterator[Browser]:
    """One Chromium for every browser test of this process (a launch takes a second or more)."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        _loop_put_aside()
        yield browser
        _loop_taken_up(browser)
        browser.close()


def _loop_put_aside() -> None:
    """Between its calls Playwright's sync API leaves its event loop marked as running in this thread
    (while its driver connection lives): a later test's asyncio.run() would refuse to start, and its
    ORM calls would count as made from async code. Between browser tests the loop is set aside..."""
    asyncio._set_running_loop(None)


def _loop_taken_up(browser: Browser) -> None:
    """... and taken up again before a browser test's first call, as Playwright's calls expect it."""
    asyncio._set_running_loop(browser._loop)


@pytest.fixture
def page(chromium: Browser, live_server: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Page]:
    """A fresh context and page on the live server; a Content-Security-Policy violation fails the test."""
    # Playwright's sync API keeps an event loop in this thread; the test's own ORM calls are still sync.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    _loop_taken_up(chromium)
    context = chromium.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    try:
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
        context.set_default_timeout(10_000)
        violations: list[str] = []
        context.expose_function("reportCspViolation", lambda text: violations.append(text))
        context.add_init_script(CSP_LISTENER)
        page = context.new_page()
        page.on(
            "console", lambda message: "Content Security Policy" in message.text and violations.append(message.text)
        )
        yield page
    finally:
        context.close()
        # ORM calls made while Playwright's loop counts as running got connections of their own: Django
        # keeps a thread's connections apart while an event loop runs in it (asgiref's thread-critical
        # Local). They are closed now, while the loop still counts as running (closed after it is set
        # aside, the thread's other connections were closed instead, and the one left open kept
        # PostgreSQL from dropping the test database at the end of the run); then the thread's own.
        connections.close_all()
        _loop_put_aside()
        connections.close_all()
    assert violations == [], "Content-Security-Policy violations:\n" + "\n".join(violations)


def snap(page: Page, name: str) -> None:
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def as_a_worker(task: Callable[..., None], **kwargs: Any) -> None:
    """Run a task in its own thread, as a worker would: this thread has Playwright's event loop
    running, and the DNS checks start their own with asyncio.run()."""

    def work() -> None:
        try:
            task(**kwargs)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(work).result()


def settled(page: Page) -> None:
    """Wait until htmx has no request, swap or settle under way (and then a frame more)."""
    page.wait_for_function("() => !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling')")
    page.wait_for_timeout(100)


def drop_file(page: Page, name: str, rows: str) -> None:
    page.dispatch_event("[data-dropzone]", "drop", {"dataTransfer": page.evaluate_handle(UPLOAD_JS, [name, rows])})


def run_chunks_watching(page: Page, job_id: str) -> None:
    """No qcluster here: the in-memory SQLite test database is not visible to another process.
    The test runs each chunk task itself (the function a worker runs), one at a time, and waits
    for htmx's 1 s polling to show it: deterministic, no worker start-up or timing."""
    from jobs.models import Chunk, Job
    from jobs.worker import chunk_run

    for chunk_id in Chunk.objects.filter(job_id=job_id).values_list("pk", flat=True):
        as_a_worker(chunk_run, chunk_id=chunk_id)
        processed = Job.objects.values_list("processed", flat=True).get(pk=job_id)
        expect(page.locator("[data-count=processed]")).to_have_text(str(processed))


def log_in_to_the_admin(page: Page) -> None:
    from django.contrib.auth import get_user_model

    staff = "boss@service.example.com"  # staff sign in by email (createsuperuser makes it the login)
    get_user_model().objects.create_superuser(staff, staff, "a-long-staff-passphrase")
    page.goto("/admin/")
    page.get_by_label("Email").fill(staff)
    page.get_by_label("Password").fill("a-long-staff-passphrase")
    page.get_by_role("button", name="Log in").click()


def log_in(page: Page, email: str, password: str = PASSWORD) -> None:
    page.goto("/login")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()


def type_card(page: Page, number: str) -> None:
    """localstripe's card element: plain fields named by their placeholders."""
    for field, value in (("number", number), ("exp_month", "12"), ("exp_year", "34"), ("cvc", "123")):
        page.locator(f"#card-element input[placeholder={field}]").fill(value)
    page.locator("#card-element input[placeholder=postal_code]").fill("10001")


# Each visible table that reaches past its box or the screen, named by its caption or the heading above it.
TABLES_JS = """() => {
  const screen = document.documentElement.clientWidth;
  const named = (table) => (table.dataset.table || table.caption?.textContent
    || table.closest("section, details, main")?.querySelector("h1, h2, h3, summary")?.textContent
    || "a table").trim();
  // Visually hidden (a stacked table's header row, a label for screen readers): a box of 1 px or less.
  const hidden = (el, table) => {
    for (let node = el; node && node !== table; node = node.parentElement) {
      const box = node.getBoundingClientRect();
      if (box.width <= 1 || box.height <= 1) return true;
    }
    return false;
  };
  return [...document.querySelectorAll("table")].filter((table) => table.getClientRects().length).flatMap((table) => {
    const room = Math.min(screen, table.parentElement.getBoundingClientRect().right);
    const out = [...table.querySelectorAll("th, td, a, button, select, input")].filter(
      (el) => el.getClientRects().length && !hidden(el, table) && el.getBoundingClientRect().right > room + 1
    );
    if (!out.length) return [];
    const wide = Math.round(table.getBoundingClientRect().width);
    const cut = [...new Set(out.map((el) => (el.dataset.label || el.textContent || el.tagName).trim().slice(0, 30)))];
    const has = Math.round(room - table.getBoundingClientRect().left);
    return [`${named(table)}: ${wide} px in ${has} px, out of view: ${cut.slice(0, 4).join(" | ")}`];
  });
}"""
