"""Prices from one setting on the landing and billing pages; the ledger's folded lines and its CSV."""

from __future__ import annotations

import csv
import io
from typing import Any

from django.test import Client

from billing.services import credits_grant, credits_release, credits_reserve, credits_spend
from tests.billing.conftest import logged_in


def test_landing_page_shows_every_price_with_its_price_per_thousand(db: None) -> None:
    page = Client().get("/").content.decode()
    for row in ("$70</td>", "$7.00", "$3,000", "$3.00", "$29", "$5.80", "$99", "$3.96"):
        assert row in page
    assert 'id="pricing"' in page


def test_prices_follow_the_setting(db: None, settings: Any) -> None:
    settings.BILLING_PRICES = {"currency": "usd", "packs": {"pack_1k": {"credits": 1000, "cents": 1250}}, "plans": {}}
    page = Client().get("/").content.decode()
    assert "$12.50" in page
    assert "$70" not in page


def test_billing_page_without_stripe_is_as_before(owner: Any) -> None:
    page = logged_in(owner).get("/billing").content.decode()
    assert "write to" in page
    assert "Save a card" not in page
    assert 'action="/billing/packs/' not in page
    assert "$7.00" in page  # prices shown all the same


def test_card_and_purchase_pages_without_stripe_lead_back_to_billing(owner: Any) -> None:
    client = logged_in(owner)
    assert client.get("/billing/card")["Location"] == "/billing"
    assert client.post("/billing/packs/pack_1k")["Location"] == "/billing"
    assert owner.account.payments.count() == 0


def test_ledger_folds_a_jobs_chunks_into_one_expandable_line(owner: Any) -> None:
    account = owner.account
    for index in range(3):
        credits_reserve(account=account, wanted=100, reference=f"job123:chunk:{index}")
    credits_release(account=account, amount=40, reference="job123:chunk:2")
    credits_spend(account=account, reference="req-1")
    page = logged_in(owner).get("/billing").content.decode()
    assert page.count('data-ledger-line="job"') == 1
    assert "(4 entries)" in page
    assert '<td data-label="Credits" class="num">-260</td>' in page
    assert page.count('data-ledger-line="spend"') == 1


def test_ledger_csv_exports_every_entry_oldest_first(owner: Any) -> None:
    credits_grant(account=owner.account, amount=5, note="=cmd|' /C calc'!A0")
    response = logged_in(owner).get("/billing/ledger.csv")
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0] == ["created_at", "kind", "amount", "balance_after", "reference", "note"]
    assert [row[2] for row in rows[1:]] == ["1000", "5"]
    assert rows[-1][5].startswith("'=")  # a spreadsheet shows it, never runs it


def test_ledger_csv_has_only_the_callers_entries(owner: Any, outsider: Any) -> None:
    credits_grant(account=outsider.account, amount=7, note="outsider gift")
    body = b"".join(logged_in(owner).get("/billing/ledger.csv").streaming_content).decode()
    assert "outsider gift" not in body


def test_ledger_csv_needs_a_log_in(db: None) -> None:
    assert Client().get("/billing/ledger.csv").status_code == 302
