"""The ledger as a customer reads it: one line per job (its chunks' reservations and releases
folded), one per purchase (with its receipt), one per grant or single verification; and the CSV."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import CharField, Count, F, IntegerField, Max, QuerySet, Sum, Value
from django.db.models.functions import Cast, Left, StrIndex

from accounts.models import Account
from billing.models import LedgerEntry, Payment
from lib.csvcells import spreadsheet_safe

CHUNK_MARK = ":chunk:"  # a bulk entry's reference is "<job id>:chunk:<n>" (jobs.models.Chunk.reference)
JOB_KINDS = (LedgerEntry.Kind.RESERVATION, LedgerEntry.Kind.RELEASE)
CSV_COLUMNS = ["created_at", "kind", "amount", "balance_after", "reference", "note"]


@dataclass
class Line:
    key: str  # the entry's id, or the job's id for a folded job
    kind: str
    at: datetime
    amount: int
    count: int
    entry: LedgerEntry | None = None
    parts: list[LedgerEntry] = field(default_factory=list)
    payment: Payment | None = None

    @property
    def is_job(self) -> bool:
        return self.kind == "job"


def lines(account: Account) -> QuerySet[Any]:
    """Every line's key, kind, time, amount and entry count, newest first: a union Paginator can count and slice."""
    entries = LedgerEntry.objects.filter(account=account).order_by()
    singles = (
        entries.exclude(kind__in=JOB_KINDS)
        .annotate(key=Cast("id", CharField()), line_kind=F("kind"), at=F("created_at"), total=F("amount"))
        .annotate(n=Value(1, output_field=IntegerField()))
        .values_list("key", "line_kind", "at", "total", "n")
    )
    jobs = (
        entries.filter(kind__in=JOB_KINDS)
        .annotate(key=Left("reference", StrIndex("reference", Value(CHUNK_MARK)) - 1))
        .values("key")
        .annotate(
            line_kind=Value("job", output_field=CharField()), at=Max("created_at"), total=Sum("amount"), n=Count("id")
        )
        .values_list("key", "line_kind", "at", "total", "n")
    )
    return singles.union(jobs, all=True).order_by("-at", "-key")


def page_lines(account: Account, rows: list[tuple[Any, ...]]) -> list[Line]:
    """The lines of one page, with a job's entries (to expand) and a purchase's payment (its receipt)."""
    found = [Line(key=str(key), kind=kind, at=at, amount=int(total), count=int(n)) for key, kind, at, total, n in rows]
    entry_ids = [int(line.key) for line in found if not line.is_job]
    entries = LedgerEntry.objects.in_bulk(entry_ids)
    payments = Payment.objects.filter(account=account).in_bulk(
        [entry.reference for entry in entries.values() if entry.reference], field_name="stripe_id"
    )
    for line in found:
        if line.is_job:
            line.parts = list(_job_entries(account, line.key))
        else:
            line.entry = entries.get(int(line.key))
            line.payment = payments.get(line.entry.reference) if line.entry and line.entry.reference else None
    return found


def _job_entries(account: Account, job_id: str) -> QuerySet[LedgerEntry]:
    return LedgerEntry.objects.filter(account=account, reference__startswith=job_id + CHUNK_MARK).order_by(
        "created_at", "id"
    )


def csv_rows(account: Account) -> Iterator[str]:
    """The whole ledger, oldest first, one entry a row: streamed, however long it is."""
    buffer = _Echo()
    writer = csv.writer(buffer)
    yield writer.writerow(CSV_COLUMNS)
    for entry in LedgerEntry.objects.filter(account=account).order_by("created_at", "id").iterator(chunk_size=2000):
        stamp = entry.created_at.strftime("%Y-%m-%dT%H:%M:%SZ")
        yield writer.writerow(
            [stamp, entry.kind, entry.amount, entry.balance_after, entry.reference, spreadsheet_safe(entry.note)]
        )


class _Echo:
    def write(self, value: str) -> str:
        return value
