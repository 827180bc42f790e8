from __future__ import annotations

import re
from datetime import timedelta

from django.db import models
from django.utils import timezone

from accounts.models import Account, KeyMode
from lib import outbound
from lib.tokens import random_base62
from verification.engine import SubStatus
from verification.engine.modes import ValidationMode
from verification.engine.providers import PROVIDERS

JOB_ID_PATTERN = "job_[0-9A-Za-z]{24}"


# Catch-all rows by their deliverability estimate (docs/feedback.md): deep jobs only.
CATCH_ALL_SPLIT = ("catch_all_likely", "catch_all_unlikely")
# The job object's `breakdown` (docs/bulk.md, "Poll"): processed rows by sub_status, then two flags.
BREAKDOWN_KEYS = (*(sub.value for sub in SubStatus), "free_provider", "did_you_mean", *CATCH_ALL_SPLIT)
# And rows by mail_provider (README, `mail_provider`), stored in the same counter as "mail_provider.<name>".
MAIL_PROVIDER_PREFIX = "mail_provider."


def new_job_id() -> str:
    return "job_" + random_base62(24)


def is_job_id(value: str) -> bool:
    return re.fullmatch(JOB_ID_PATTERN, value) is not None


def new_event_id() -> str:
    return "evt_" + random_base62(24)


class JobQuerySet(models.QuerySet["Job"]):
    def seen_by(self, *, account: Account, key_mode: str) -> JobQuerySet:
        """The jobs a key of `mode` may see: its account's, made in its own mode (a test key never
        sees a live job, nor a live key a test one)."""
        return self.filter(account=account, key_mode=key_mode)

    def live(self) -> JobQuerySet:
        return self.filter(key_mode=KeyMode.LIVE)


class JobManager(models.Manager.from_queryset(JobQuerySet)):  # type: ignore[misc]
    def get_queryset(self) -> JobQuerySet:
        # The upload's header (up to 1,000 names) is read only to write the customer's-columns file.
        return super().get_queryset().defer("columns")


class Job(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending"
        PROCESSING = "processing"
        COMPLETED = "completed"
        FAILED = "failed"

    class Grouping(models.TextChoices):
        NONE = "", "not needed"
        DUE = "due", "due"
        DONE = "done", "done"

    id = models.CharField(primary_key=True, max_length=32, default=new_job_id, editable=False)
    account = models.ForeignKey("accounts.Account", models.CASCADE, related_name="jobs")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    validation_mode = models.CharField(
        max_length=10, db_default=ValidationMode.FAST, help_text="fast, or deep (SMTP: docs/deep.md)."
    )
    callback_url = models.URLField(max_length=2000, blank=True)
    input_name = models.CharField(max_length=255, help_text="Accepted addresses, in storage.")
    result_name = models.CharField(max_length=255, blank=True)
    original_name = models.CharField(
        max_length=255, blank=True, help_text="The result with the customer's own columns first."
    )
    filename = models.CharField(max_length=255, null=True, blank=True, help_text="The uploaded file's base name.")
    notify_email = models.EmailField(blank=True, help_text="Mailed when the job finishes (chosen on upload).")
    columns = models.JSONField(default=list, blank=True, help_text="The upload's column names, in order.")
    breakdown = models.JSONField(default=dict, blank=True, help_text="Processed rows by sub_status and flag.")
    files_expired_at = models.DateTimeField(null=True, blank=True, help_text="When retention deleted the files.")
    # Days its files are kept once finished, as asked at upload (or the account's default); None: JOB_RETENTION_DAYS.
    retention_days = models.PositiveSmallIntegerField(null=True, blank=True)
    total = models.PositiveIntegerField()
    processed = models.PositiveIntegerField(default=0)
    valid = models.PositiveIntegerField(default=0)
    invalid = models.PositiveIntegerField(default=0)
    risky = models.PositiveIntegerField(default=0)
    unknown = models.PositiveIntegerField(default=0)
    credits_refunded = models.PositiveIntegerField(
        default=0, db_default=0, help_text="Unknown rows credited back at completion (VERIFIER_CHARGE_UNKNOWN=0)."
    )
    partial = models.BooleanField(default=False, help_text="Credits ran out before every row was processed.")
    failure_reason = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    served_at = models.DateTimeField(null=True, blank=True, help_text="When a worker last took one of its chunks.")
    # A live deep job larger than a batch is ordered by MX address before it runs (jobs/grouping.py).
    grouping = models.CharField(
        max_length=8,
        choices=Grouping.choices,
        blank=True,
        default=Grouping.NONE,
        db_default=Grouping.NONE,
        help_text="due: its rows are being ordered by MX address; it has no chunks until then.",
    )
    grouped_name = models.CharField(
        max_length=255,
        blank=True,
        default="",
        db_default="",
        help_text="The chunks' addresses in MX-address order, in storage.",
    )
    grouping_claimed_at = models.DateTimeField(
        null=True, blank=True, help_text="When a deep worker took its grouping (taken again a lease later)."
    )
    key_mode = models.CharField(
        max_length=4,
        choices=KeyMode.choices,
        default=KeyMode.LIVE,
        db_default=KeyMode.LIVE,  # rows written by hand (reports, volume tests) are live
        help_text="test: made with a test key, in the sandbox.",
    )

    objects = JobManager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["account", "-created_at"]),
            # The staff dashboard counts jobs by status and recent completion (ops/machine.py).
            models.Index(fields=["status", "completed_at"], name="job_status_completed_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.id} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.COMPLETED, self.Status.FAILED)

    @property
    def may_wait_for_resolver(self) -> bool:
        """Unfinished and live: a broken DNS resolver holds it (a test key's job asks no resolver)."""
        return not self.is_finished and self.key_mode != KeyMode.TEST

    @property
    def chunks_folder(self) -> str:
        """Where its chunks' addresses are read: in MX-address order once grouped, else as uploaded."""
        return self.grouped_name or self.input_name

    @property
    def percent_processed(self) -> int:
        return self.processed * 100 // self.total if self.total else 100

    @property
    def display_status(self) -> str:
        """What the portal shows: a completed job that ran out of credits is "Partial", not "Completed"."""
        return "Partial" if self.partial and self.status == self.Status.COMPLETED else self.get_status_display()

    @property
    def badge(self) -> str:
        return "partial" if self.display_status == "Partial" else self.status

    @property
    def rows_left(self) -> int:
        return self.total - self.processed

    @property
    def took(self) -> str:
        """How long it ran, from its start to its end ("" until it has ended): "under a second", "4 s",
        "2 min 5 s", "1 h 3 min"."""
        if self.started_at is None or self.completed_at is None:
            return ""
        exact = (self.completed_at - self.started_at).total_seconds()
        if exact < 1:
            return "under a second"
        seconds = round(exact)
        if seconds < 60:
            return f"{seconds} s"
        if seconds < 3600:
            return f"{seconds // 60} min {seconds % 60} s"
        return f"{seconds // 3600} h {seconds % 3600 // 60} min"

    def rows_with(self, statuses: str) -> int:
        """Processed rows of these comma-separated statuses (all of them for "")."""
        return sum(getattr(self, status) for status in statuses.split(",")) if statuses else self.processed

    @property
    def breakdown_counts(self) -> dict[str, int]:
        """Every key of the contract's breakdown, zero when none."""
        return {key: int(self.breakdown.get(key, 0)) for key in BREAKDOWN_KEYS}

    @property
    def mail_provider_counts(self) -> dict[str, int]:
        """Processed rows by mail_provider: every provider, zero when none (rows of no known one are not counted)."""
        return {name: int(self.breakdown.get(MAIL_PROVIDER_PREFIX + name, 0)) for name in PROVIDERS}


class DeletedJob(models.Model):
    """What is left of a job its owner deleted, so its old links can say so, and when (then pruned)."""

    KEPT = timedelta(days=90)

    id = models.CharField(primary_key=True, max_length=32, editable=False)
    account = models.ForeignKey("accounts.Account", models.CASCADE, related_name="deleted_jobs")
    filename = models.CharField(max_length=255, null=True, blank=True)
    deleted_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"{self.id} (deleted)"


class Chunk(models.Model):
    """A slice of a job's rows, claimed and processed by one worker at a time."""

    class State(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        DONE = "done"
        CANCELLED = "cancelled"

    job = models.ForeignKey(Job, models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    size = models.PositiveIntegerField()
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    # Deep jobs: a chunk with greylisted rows is asked again (up to DEEP_RETRY_ROUNDS times), not before then.
    retry_round = models.PositiveSmallIntegerField(db_default=0)
    not_before = models.DateTimeField(null=True, blank=True)
    queued_at = models.DateTimeField(default=timezone.now)
    # None until the first claim reserved credits; a re-run reuses what is recorded here.
    reserved = models.PositiveIntegerField(null=True, blank=True)
    processed = models.PositiveIntegerField(default=0)
    valid = models.PositiveIntegerField(default=0)
    invalid = models.PositiveIntegerField(default=0)
    risky = models.PositiveIntegerField(default=0)
    unknown = models.PositiveIntegerField(default=0)
    part_name = models.CharField(max_length=255, blank=True)
    # A grouped job's batch (jobs/grouping.py): a deep worker takes the chunks of one batch together.
    batch = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["job", "index"]
        constraints = [models.UniqueConstraint(fields=["job", "index"], name="chunk_index_unique")]
        indexes = [models.Index(fields=["state", "lease_expires_at"])]

    def __str__(self) -> str:
        return f"{self.job_id} #{self.index} ({self.state})"

    @property
    def reference(self) -> str:
        return f"{self.job_id}:chunk:{self.index}"

    def ledger_note(self, filename: str | None) -> str:
        """What the customer's ledger says of this chunk's credits: the file and the job, not `reference`."""
        name = filename or "Bulk job"
        return f"{name[:150]} (job {self.job_id}, part {self.index + 1})"


class CallbackDelivery(models.Model):
    """One event for one job, or for one verification asked again (`verification.resolved`); its
    attempts share the event id."""

    class State(models.TextChoices):
        PENDING = "pending"
        DELIVERED = "delivered"
        FAILED = "failed"

    event_id = models.CharField(max_length=32, unique=True, default=new_event_id, editable=False)
    job = models.ForeignKey(Job, models.CASCADE, related_name="callbacks", null=True, blank=True)
    verification = models.ForeignKey(
        "verification.RetriedVerification", models.CASCADE, related_name="callbacks", null=True, blank=True
    )
    event = models.CharField(max_length=30)
    url = models.URLField(max_length=2000)
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "callback deliveries"

    def __str__(self) -> str:
        return f"{self.event} {self.event_id} ({self.state})"


class CallbackAttempt(models.Model):
    delivery = models.ForeignKey(CallbackDelivery, models.CASCADE, related_name="attempt_rows")
    number = models.PositiveSmallIntegerField()
    started_at = models.DateTimeField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.CharField(max_length=255, blank=True)
    duration_ms = models.PositiveIntegerField()

    class Meta:
        ordering = ["delivery", "number"]
        constraints = [models.UniqueConstraint(fields=["delivery", "number"], name="callback_attempt_unique")]

    def __str__(self) -> str:
        return f"#{self.number}: {self.status_code or self.error}"

    @property
    def succeeded(self) -> bool:
        return outbound.is_success(self.status_code)


class ListEvaluation(models.Model):
    """One free estimate of a list's quality (jobs/evaluation.py), kept a day to bound how many an
    account may have and to answer the same list again with the same estimate."""

    account = models.ForeignKey("accounts.Account", models.CASCADE, related_name="list_evaluations")
    fingerprint = models.CharField(max_length=64, help_text="SHA-256 of the list's sorted unique addresses.")
    estimate = models.JSONField(null=True, blank=True, help_text="Empty while the sample is being judged.")
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        indexes = [models.Index(fields=["account", "created_at"])]

    def __str__(self) -> str:
        return f"{self.account_id} {self.created_at:%Y-%m-%d %H:%M}"
