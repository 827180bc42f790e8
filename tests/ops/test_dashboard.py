"""/admin/dashboard/ (README, "Operations"): staff only, each figure from the data, few queries."""

from __future__ import annotations

import html
import re
from datetime import timedelta
from typing import Any

import time_machine
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from billing.models import LedgerEntry
from ops.business import daily, running_out, top_accounts, window_start
from tests.conftest import Persona
from tests.factories import AccountFactory
from tests.ops.conftest import MAX_QUERIES
from tests.support import business
from tests.support.portal import logged_in

URL = "/admin/dashboard/"
Kind = LedgerEntry.Kind


def figures(page: str) -> dict[str, str]:
    found = re.findall(r'data-figure="([^"]+)"[^>]*>([^<]*)<', page)
    return {name: html.unescape(text).strip() for name, text in found}


def test_anonymous_visitors_are_sent_to_the_admin_log_in(db: None) -> None:
    response = Client().get(URL)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


def test_customers_are_sent_to_the_admin_log_in(owner: Persona) -> None:
    response = logged_in(owner).get(URL)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


def test_admin_index_links_to_the_dashboard(admin_client_: Client) -> None:
    assert f'href="{URL}"' in admin_client_.get(reverse("admin:index")).content.decode()


def test_the_breadcrumb_sits_in_the_admins_breadcrumb_bar(admin_client_: Client) -> None:
    page = admin_client_.get(URL).content.decode()
    assert re.search(r'<nav aria-label="Breadcrumbs">\s*<ol class="breadcrumbs">', page)


def test_no_table_header_cell_is_empty(admin_client_: Client) -> None:
    page = admin_client_.get(URL).content.decode()
    assert "<th" in page
    assert not re.search(r"<th[^>]*>\s*</th>", page)


def test_every_figure_matches_the_data(admin_client_: Client, django_assert_max_num_queries: Any) -> None:
    business.build()
    with django_assert_max_num_queries(MAX_QUERIES):
        page = admin_client_.get(URL).content.decode()
    shown = figures(page)
    assert {name: shown.get(name) for name in business.EXPECTED} == business.EXPECTED
    assert "No qcluster has reported" in page


def test_lists_name_the_accounts_running_out_and_the_top_users(admin_client_: Client) -> None:
    accounts = business.build()
    page = admin_client_.get(URL).content.decode()
    running_out = re.findall(r'data-figure="running-out"><th scope="row"><a href="([^"]+)">([^<]+)<', page)
    assert running_out == [
        (reverse("admin:accounts_account_change", args=[accounts["bob"].pk]), "bob@bank.example.com")
    ]
    top = re.findall(r'data-figure="top-account"><th scope="row"><a [^>]+>([^<]+)</a></th><td>(\d+)<', page)
    assert top == [("alice@shop.example.com", "96"), ("bob@bank.example.com", "70")]


def test_the_figures_links_open_filtered_admin_lists(admin_client_: Client) -> None:
    business.build()
    page = admin_client_.get(URL).content.decode()
    links = set(re.findall(r'href="(/admin/[a-z_]+/[a-z_]+/\?[^"]+)"', page))
    assert len(links) >= 10
    for link in links:
        response = admin_client_.get(html.unescape(link))
        assert response.status_code == 200, link  # an unknown lookup would redirect to ?e=1
        assert "Select" in response.content.decode()


def test_the_chart_is_server_rendered_svg_without_inline_style(admin_client_: Client) -> None:
    business.build()
    page = admin_client_.get(URL).content.decode()
    assert page.count('<rect class="ops-bar') == 30
    assert "style=" not in page.split('<div id="content-main"')[1]
    assert "Addresses verified per day, last 30 days: 166 in all" in page


def test_each_ledger_entry_counts_on_its_own_utc_day(db: None) -> None:
    """The chart's days are UTC days: an entry in a day's first or last microsecond is that day's."""
    account = AccountFactory(plan_code="starter", credits=0)
    yesterday = window_start(1)
    business.ledger(account, Kind.SPEND, -1, yesterday)  # 00:00:00.000000
    business.ledger(account, Kind.RESERVATION, -7, yesterday + timedelta(days=1, microseconds=-1))  # 23:59:59.999999
    business.ledger(account, Kind.GRANT, 50, window_start(0))
    business.ledger(account, Kind.RELEASE, 2, window_start(0) + timedelta(hours=23, minutes=59, seconds=59))
    business.ledger(account, Kind.SPEND, -1, yesterday - timedelta(microseconds=1))  # the day before: outside
    days = daily(2)
    assert days == [(yesterday.date(), 1, 7, 0), (window_start(0).date(), 0, -2, 50)]


def test_usage_in_the_first_microsecond_of_the_window_counts(db: None) -> None:
    """Top users over 30 days and those running out over 7: an entry exactly 30 (or 7) days old is in."""
    account = AccountFactory(plan_code="starter", credits=0)
    with time_machine.travel(timezone.now(), tick=False):
        business.ledger(account, Kind.SPEND, -1, timezone.now() - timedelta(days=30))
        business.ledger(account, Kind.RESERVATION, -3, timezone.now() - timedelta(days=7))
        assert [(row.account_id, row.used) for row in top_accounts()] == [(account.pk, 4)]
        assert [(row.account_id, row.used) for row in running_out()] == [(account.pk, 3)]
