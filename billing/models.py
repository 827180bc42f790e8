from __future__ import annotations

from django.db import models


class Plan(models.Model):
    code = models.SlugField(max_length=20, unique=True)
    name = models.CharField(max_length=50)
    allows_bulk = models.BooleanField(default=False)
    requests_per_second = models.PositiveIntegerField()
    sort_order = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["sort_order"]

    def __str__(self) -> str:
        return self.name


class LedgerEntry(models.Model):
    class Kind(models.TextChoices):
        GRANT = "grant", "Grant"
        SPEND = "spend", "Spend"
        RESERVATION = "reservation", "Bulk reservation"
        RELEASE = "release", "Bulk release"

    account = models.ForeignKey("accounts.Account", models.CASCADE, related_name="ledger_entries")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    # Signed: grants and releases add, spends and reservations subtract.
    amount = models.BigIntegerField()
    balance_after = models.BigIntegerField()
    reference = models.CharField(max_length=100, blank=True, help_text="Job or request this entry belongs to.")
    note = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "ledger entries"

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.amount:+d}"
