from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

from django.db import models
from django.db.models.functions import TruncDate
from django.utils import timezone

from lib.address_keys import KEY_LENGTH, key_head
from lib.money import dollars

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

    def usage_totals(self, *, account: Account, days: int = 30) -> tuple[int, int]:
        """Addresses verified (credits used) today and over the last `days` UTC days, today included.

        Counted as `daily_usage` counts them, in one statement.
        """
        today = timezone.localdate()
        first = today - timedelta(days=days - 1)
        entries = self.filter(account=account, kind__in=LedgerEntry.USAGE_KINDS, created_at__date__gte=first)
        totals = entries.aggregate(
            today=models.Sum("amount", filter=models.Q(created_at__date=today), default=0),
            period=models.Sum("amount", default=0),
        )
        return max(0, -totals["today"]), max(0, -totals["period"])


class LedgerEntry(models.Model):
    class Kind(models.TextChoices):
        GRANT = "grant", "Grant"
        SPEND = "spend", "Spend"
        RESERVATION = "reservation", "Bulk reservation"
        RELEASE = "release", "Bulk release"
        REFUND = "refund", "Unknown rows refunded"
        GUARANTEE_REFUND = "guarantee_refund", "Bounce guarantee refund"

    # PROTECT: the ledger is a financial record. An account (or its owner) with entries cannot be
    # deleted, from the admin or anywhere else; it is deactivated instead (accounts/admin.py).
    account = models.ForeignKey("accounts.Account", models.PROTECT, related_name="ledger_entries")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    # Signed: grants, releases and refunds add, spends and reservations subtract.
    amount = models.BigIntegerField()
    balance_after = models.BigIntegerField()
    reference = models.CharField(max_length=100, blank=True, help_text="Job or request this entry belongs to.")
    note = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    objects = LedgerEntryQuerySet.as_manager()

    # The kinds that stand for addresses verified (see LedgerEntryQuerySet.daily_usage).
    USAGE_KINDS = (Kind.SPEND, Kind.RESERVATION, Kind.RELEASE, Kind.REFUND)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "ledger entries"
        # The staff dashboard's figures read a time range and these columns only (ops/business.py).
        indexes = [models.Index(fields=["created_at", "kind", "account", "amount"], name="ledger_usage_idx")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.amount:+d}"

    @property
    def description(self) -> str:
        """What the entry was for, in words: its note, else its reference (a request's own word said plainly)."""
        return self.note or _REFERENCE_WORDS.get(self.reference, self.reference)


# References that are a word of ours rather than a job or a payment (verification/services.py).
_REFERENCE_WORDS = {"verify": "Addresses checked one at a time (API, portal or sign-up form)"}


class Customer(models.Model):
    """An account's customer at Stripe: its saved card, its plan subscription, its auto-recharge."""

    account = models.OneToOneField("accounts.Account", models.CASCADE, related_name="stripe_customer")
    stripe_id = models.CharField(max_length=64, unique=True)
    card_payment_method = models.CharField(max_length=64, blank=True)
    card_label = models.CharField(max_length=40, blank=True, help_text="e.g. visa •••• 4242")
    subscription_id = models.CharField(max_length=64, blank=True)
    subscription_plan = models.CharField(max_length=20, blank=True, help_text="Plan code of the subscription.")
    # Where a downgrade or a cancellation goes when the paid period ends (blank: nothing pending).
    pending_plan = models.CharField(max_length=20, blank=True)
    period_end = models.DateTimeField(null=True, blank=True)
    recharge_pack = models.CharField(max_length=20, blank=True, help_text="Blank: auto-recharge off.")
    recharge_below = models.PositiveIntegerField(default=0)
    recharge_attempted_at = models.DateTimeField(null=True, blank=True)
    recharge_failure = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.stripe_id


class Payment(models.Model):
    """One charge at Stripe: a pack's PaymentIntent or a plan's invoice. Its id is unique, so a
    payment is granted once however often Stripe tells us about it."""

    class Kind(models.TextChoices):
        PACK = "pack", "Credit pack"
        PLAN = "plan", "Plan invoice"

    class Status(models.TextChoices):
        SUCCEEDED = "succeeded", "Paid"
        FAILED = "failed", "Failed"

    account = models.ForeignKey("accounts.Account", models.PROTECT, related_name="payments")
    stripe_id = models.CharField(max_length=64, unique=True, help_text="PaymentIntent (pi_…) or invoice (in_…).")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    product = models.CharField(max_length=20, help_text="Pack or plan code.")
    credits = models.BigIntegerField(default=0)
    cents = models.BigIntegerField()
    currency = models.CharField(max_length=3)
    status = models.CharField(max_length=10, choices=Status.choices)
    off_session = models.BooleanField(default=False, help_text="An auto-recharge.")
    receipt_url = models.URLField(max_length=500, blank=True)
    failure = models.CharField(max_length=255, blank=True)
    # Stripe's `created` (Unix time): of two plan invoices delivered out of order, the newer sets the plan.
    stripe_created = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.stripe_id} {self.product} {self.status}"

    @property
    def amount(self) -> str:
        return dollars(self.cents)

    @property
    def description(self) -> str:
        return purchase_words(self.kind, self.product, self.credits)

    @property
    def number(self) -> str:
        """The receipt's number: the year and the payment's row, never reused."""
        return f"R-{self.created_at:%Y}-{self.pk:06d}"


def purchase_words(kind: str, product: str, credits: int) -> str:
    """What a payment bought, as a customer reads it: "1,000 credits", "Starter plan, one month: 10,000 credits"."""
    if kind == Payment.Kind.PLAN:
        return f"{product.title()} plan, one month: {credits:,} credits"
    return f"{credits:,} credits"


class BillingDetails(models.Model):
    """The name and address an account's receipts are made out to (set by whoever may see Billing)."""

    account = models.OneToOneField("accounts.Account", models.CASCADE, related_name="billing_details")
    name = models.CharField(max_length=200, blank=True, help_text="A company or a person.")
    address = models.TextField(max_length=1000, blank=True)
    tax_id = models.CharField("VAT or tax number", max_length=50, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "billing details"

    def __str__(self) -> str:
        return self.name or f"account {self.account_id}"


# Stripe retries a delivery for three days; grants are kept for good by Payment's unique id, so an
# event's record is for staff and for deduplication only, and is pruned after this (lib/prune.py).
STRIPE_EVENT_LIFETIME = timedelta(days=90)


def stripe_event_expiry() -> datetime:
    return timezone.now() + STRIPE_EVENT_LIFETIME


class StripeEvent(models.Model):
    """Every webhook event Stripe delivered with a good signature, by its id: a redelivery is seen as one."""

    class Outcome(models.TextChoices):
        GRANTED = "granted", "Credits granted"
        ALREADY = "already", "Already granted (another event or the return page)"
        UPDATED = "updated", "Account updated"
        IGNORED = "ignored", "Not a type we act on"
        MISMATCHED = "mismatched", "Mismatched: nothing granted"

    event_id = models.CharField(max_length=64, unique=True)
    type = models.CharField(max_length=60)
    account = models.ForeignKey("accounts.Account", models.SET_NULL, null=True, blank=True, related_name="+")
    outcome = models.CharField(max_length=12, choices=Outcome.choices)
    detail = models.CharField(max_length=255, blank=True)
    received_at = models.DateTimeField(auto_now_add=True, db_index=True)
    expires_at = models.DateTimeField(default=stripe_event_expiry, db_index=True)

    class Meta:
        ordering = ["-received_at", "-id"]

    def __str__(self) -> str:
        return f"{self.event_id} {self.type}"


# A charged valid answer is kept this long: the Guarantee page plots twelve calendar months.
ANSWERS_KEPT = timedelta(days=400)


class ValidAnswerQuerySet(models.QuerySet["ValidAnswer"]):
    def of_keys(self, keys: Collection[str]) -> ValidAnswerQuerySet:
        """The answers of these address keys, found through their heads' index."""
        return self.filter(key_head__in={key_head(key) for key in keys}, address_key__in=keys)


class ValidAnswer(models.Model):
    """A `valid` answer the account was charged for (docs/guarantee.md): what a hard bounce reported
    within 30 days is matched against. The address is kept as its HMAC (lib/address_keys.py), as in
    the other stores of reported outcomes; rows expire after ANSWERS_KEPT (lib/prune.py)."""

    # Found by account through valid_answer_month, which begins with it: no index of its own.
    account = models.ForeignKey("accounts.Account", models.CASCADE, related_name="+", db_index=False)
    address_key = models.CharField(max_length=KEY_LENGTH)
    # address_key's head (lib/address_keys.py `key_head`), the index a bounce or an erasure finds the
    # rows through: a bulk chunk inserts up to 2,000 rows at random places in that index, and with the
    # whole 64-character key in it that was a fifth of a fast chunk's time on SQLite (bench/README.md).
    key_head = models.BigIntegerField()
    # google, microsoft, yahoo or other, from the MX hosts (verification/engine/providers.py).
    provider_family = models.CharField(max_length=10)
    high_confidence = models.BooleanField()
    answered_at = models.DateTimeField()
    expires_at = models.DateTimeField(db_index=True)

    objects = ValidAnswerQuerySet.as_manager()

    class Meta:
        indexes = [
            models.Index(fields=["key_head"], name="valid_answer_head"),
            models.Index(fields=["account", "answered_at"], name="valid_answer_month"),
        ]

    def __str__(self) -> str:
        return f"{self.address_key[:12]}… valid at {self.answered_at:%Y-%m-%d %H:%M}"


# The mail provider families a valid answer is counted under (verification/engine/providers.py names them).
FAMILIES = ("google", "microsoft", "yahoo", "other")
_HIGH = 0x80  # in a packed answer's last byte, beside its family's index


class AnswerBatch(models.Model):
    """A bulk chunk's charged `valid` answers, packed into one row by the transaction that charges them
    (verification/guarantee.py) and filed later as ValidAnswer rows, sorted by key head
    (billing/guarantee.py `answers_filed`): after the job completes, and before anything reads the
    account's answers. Inserting ~1,500 answers a chunk into ValidAnswer's head index, each on a page
    of its own, held SQLite's write lock about 20 ms a chunk (docs/guarantee.md, "When an answer is
    kept"). A packed answer is its address key's 32 bytes, then one byte: its family's index in
    FAMILIES, with _HIGH set for a high-confidence answer."""

    account = models.ForeignKey("accounts.Account", models.CASCADE, related_name="+")
    answered_at = models.DateTimeField()
    answers = models.BinaryField()

    RECORD = 33

    def __str__(self) -> str:
        return f"{len(self.answers) // self.RECORD} valid answers of {self.answered_at:%Y-%m-%d %H:%M}, not yet filed"

    @staticmethod
    def packed(answers: Iterable[tuple[str, str, bool]]) -> bytes:
        """(address key, family, high confidence) packed."""
        return b"".join(
            bytes.fromhex(key) + bytes((FAMILIES.index(family) | (_HIGH if high else 0),))
            for key, family, high in answers
        )

    @classmethod
    def unpacked(cls, packed: bytes) -> Iterator[tuple[str, str, bool]]:
        for at in range(0, len(packed), cls.RECORD):
            flags = packed[at + cls.RECORD - 1]
            yield packed[at : at + cls.RECORD - 1].hex(), FAMILIES[flags & ~_HIGH], bool(flags & _HIGH)


class GuaranteeRefund(models.Model):
    """A charged valid answer that hard-bounced within 30 days by an authenticated event: at most one per
    answer (the constraint, not a check first, is what makes retries and parallel deliveries refund once).
    `credited` is false when the month's cap had been reached: recorded, not credited."""

    answer = models.OneToOneField(ValidAnswer, models.CASCADE, related_name="refund")
    account = models.ForeignKey("accounts.Account", models.CASCADE, related_name="+")
    bounced_at = models.DateTimeField()
    credited = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    def __str__(self) -> str:
        return f"guarantee refund of answer {self.answer_id} ({'credited' if self.credited else 'over the cap'})"
