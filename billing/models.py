from __future__ import annotations

from datetime import date, timedelta
from typing import TYPE_CHECKING

from django.db import models
from django.db.models.functions import TruncDate
from django.utils import timezone

if TYPE_CHECKING:
    from accounts.models import Account


class LedgerEntryQuerySet(models.QuerySet["LedgerEntry"]):
    def daily_usage(self, *, account: Account, days: int = 30) -> list[tuple[date, int]]:
        """Addresses verified per UTC day, oldest first, one pair per day including empty days.

        Single verifications are spends; bulk rows are reservations minus releases, so a job
        whose release lands the day after its reservation shifts a little usage between days.
        """
        today = timezone.localdate()
        first = today - timedelta(days=days - 1)
        rows = (
            self.filter(account=account, kind__in=LedgerEntry.USAGE_KINDS, created_at__date__gte=first)
            .annotate(day=TruncDate("created_at"))
            .values("day")
            .annotate(net=models.Sum("amount"))
            .order_by()
        )
        used = {row["day"]: -row["net"] for row in rows}
        return [(day, max(0, used.get(day, 0))) for day in (first + timedelta(days=n) for n in range(days))]


class LedgerEntry(models.Model):
    class Kind(models.TextChoices):
        GRANT = "grant", "Grant"
        SPEND = "spend", "Spend"
        RESERVATION = "reservation", "Bulk reservation"
        RELEASE = "release", "Bulk release"

    # PROTECT: the ledger is a financial record. An account (or its owner) with entries cannot be
    # deleted, from the admin or anywhere else; it is deactivated instead (accounts/admin.py).
    account = models.ForeignKey("accounts.Account", models.PROTECT, related_name="ledger_entries")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    # Signed: grants and releases add, spends and reservations subtract.
    amount = models.BigIntegerField()
    balance_after = models.BigIntegerField()
    reference = models.CharField(max_length=100, blank=True, help_text="Job or request this entry belongs to.")
    note = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    objects = LedgerEntryQuerySet.as_manager()

    # The kinds that stand for addresses verified (see LedgerEntryQuerySet.daily_usage).
    USAGE_KINDS = (Kind.SPEND, Kind.RESERVATION, Kind.RELEASE)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "ledger entries"
        # The staff dashboard's figures read a time range and these columns only (ops/business.py).
        indexes = [models.Index(fields=["created_at", "kind", "account", "amount"], name="ledger_usage_idx")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.amount:+d}"
