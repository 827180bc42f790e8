"""The words a marketer reads (issue 43, finding 7): the top menu holds what they use, a single check's
ledger line says what it was, a job says how it was checked, figures have their thousands separated,
a hint for a mouse is not given to a touch screen, and the README's CLI steps leave git status clean."""

from __future__ import annotations

import subprocess
from pathlib import Path

from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from billing.services import credits_grant
from jobs.models import Job
from tests.conftest import Persona
from tests.support.portal import logged_in

ROOT = Path(__file__).resolve().parents[2]


def nav(page: str) -> str:
    return page.split('<ul class="nav-links">')[1].split("</ul>")[0]


def test_the_signing_secret_is_linked_from_the_keys_page_not_the_top_menu(owner: Persona) -> None:
    client = logged_in(owner)
    assert "Signing secret" not in nav(client.get(reverse("dashboard")).content.decode())
    keys = client.get(reverse("keys")).content.decode()
    assert f'<a href="{reverse("signing-secret")}">Signing secret</a>' in keys


def test_a_single_checks_ledger_line_says_what_it_was_not_verify(owner: Persona) -> None:
    owner.verify("jane@good.com")
    page = logged_in(owner).get(reverse("billing")).content.decode()
    assert "Addresses checked one at a time (API, portal or sign-up form)" in page
    assert '<td data-label="Note">verify</td>' not in page


def test_a_jobs_page_says_how_it_was_checked_in_words(owner: Persona) -> None:
    job = Job.objects.create(account=owner.account, total=1, input_name="none.csv")
    page = logged_in(owner).get(reverse("job", args=[job.pk])).content.decode()
    assert "Quick check: address, domain and lists" in page and "Fast mode" not in page


def test_the_staff_dashboard_separates_thousands(owner: Persona) -> None:
    credits_grant(account=owner.account, amount=13_200, note="a large grant")
    staff = get_user_model().objects.create_superuser("staff@service.example.com", "staff@service.example.com", "pw")
    client = Client()
    client.force_login(staff)
    page = client.get("/admin/dashboard/").content.decode()
    assert 'data-figure="granted-today"' in page and "14,200</a>" in page  # the opening 1,000 and the grant


def test_the_usage_charts_hover_hint_is_not_given_on_a_touch_screen(owner: Persona) -> None:
    owner.verify("jane@good.com")
    page = logged_in(owner).get(reverse("dashboard")).content.decode()
    assert '<span class="hover-hint"> Hover a bar for its day.</span>' in page
    assert "@media (hover: none) { .hover-hint { display: none; } }" in (ROOT / "static/css/app.css").read_text()


def test_what_the_readmes_cli_steps_make_in_the_root_is_ignored_by_git() -> None:
    made = ["venv/", "contacts.txt", "contacts.csv", "crm.csv", "result.csv", "safe-to-send.csv", "quickstart.csv"]
    done = subprocess.run(["git", "check-ignore", *made], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.stdout.split() == made
