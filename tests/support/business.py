"""A small business with known figures, for the staff dashboard's tests (unit and browser)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone

from accounts.models import Account
from billing.models import LedgerEntry
from jobs.models import CallbackDelivery, Chunk, Job
from ops.business import window_start
from tests.factories import AccountFactory

Kind = LedgerEntry.Kind

# What the dashboard must show for the business below, by the figure's data-figure name.
EXPECTED = {
    "single-today": "4",
    "single-week": "6",
    "single-month": "6",
    "bulk-today": "0",
    "bulk-week": "70",
    "bulk-month": "160",
    "verified-today": "4",
    "verified-week": "76",
    "verified-month": "166",
    "granted-today": "1,105",
    "granted-week": "1,105",
    "granted-month": "1,105",
    "signups-today": "3",
    "signups-week": "3",
    "signups-month": "3",
    "active-accounts": "2",
    "plan-starter": "1",
    "plan-pro": "1",
    "plan-free": "1",
    "jobs-pending": "1",
    "jobs-processing": "2",
    "jobs-failed": "1",
    "queue-depth": "2",
    "chunks-requeued": "1",
    "callbacks-failed": "1",
    "callbacks-retrying": "1",
    "unknown-share": "30.0%",
}


def ledger(account: Account, kind: str, amount: int, at: datetime, times: int = 1) -> None:
    rows = LedgerEntry.objects.bulk_create(
        LedgerEntry(account=account, kind=kind, amount=amount, balance_after=0) for _ in range(times)
    )
    LedgerEntry.objects.filter(pk__in=[row.pk for row in rows]).update(created_at=at)


def job(account: Account, status: str, **fields: object) -> Job:
    return Job.objects.create(account=account, input_name="x.csv", total=10, status=status, **fields)


def build() -> dict[str, Account]:
    """Alice (starter) verifies, Bob (pro) runs out, Carol (free) has only signed up."""
    now = timezone.now()
    today = window_start(0) + (now - window_start(0)) / 2  # surely today, however early it is
    alice = AccountFactory(plan_code="starter", credits=1000, owner__email="alice@shop.example.com")
    bob = AccountFactory(plan_code="pro", credits=5, owner__email="bob@bank.example.com")
    carol = AccountFactory(plan_code="free", credits=100, owner__email="carol@home.example.com")
    ledger(alice, Kind.SPEND, -1, today, times=4)
    ledger(alice, Kind.SPEND, -1, now - timedelta(days=3), times=2)
    ledger(alice, Kind.RESERVATION, -100, now - timedelta(days=20))
    ledger(alice, Kind.RELEASE, 10, now - timedelta(days=20))
    ledger(alice, Kind.SPEND, -1, now - timedelta(days=60), times=5)
    ledger(bob, Kind.RESERVATION, -70, now - timedelta(days=2))
    _jobs(alice, now)
    return {"alice": alice, "bob": bob, "carol": carol}


def _jobs(account: Account, now: datetime) -> None:
    job(account, Job.Status.PENDING)
    running = job(account, Job.Status.PROCESSING)
    Chunk.objects.create(job=running, index=0, size=5, queued_at=now - timedelta(minutes=10))
    Chunk.objects.create(job=running, index=1, size=5, queued_at=now - timedelta(minutes=5))
    job(account, Job.Status.FAILED, completed_at=now - timedelta(hours=2))
    job(account, Job.Status.FAILED, completed_at=now - timedelta(days=2))
    crashed = job(account, Job.Status.PROCESSING)
    Chunk.objects.create(job=crashed, index=0, size=10, state=Chunk.State.RUNNING, attempts=2)
    done = job(account, Job.Status.COMPLETED, completed_at=now - timedelta(minutes=10), processed=10, unknown=3)
    for state, attempts in [("failed", 5), ("pending", 1), ("delivered", 1)]:
        CallbackDelivery.objects.create(
            job=done, event="bulk.completed", url="https://x.test/", state=state, attempts=attempts
        )
