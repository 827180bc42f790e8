from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from accounts.models import Account
from jobs.lifecycle import job_cancel, job_retry
from jobs.models import CallbackAttempt, CallbackDelivery, Chunk, Job
from lib.admin import ReadOnlyAdmin, ReadOnlyInline


class ChunkInline(ReadOnlyInline):
    model = Chunk
    fields = ["index", "batch", "size", "state", "attempts", "lease_expires_at", "reserved", "processed"]


class CallbackAttemptInline(ReadOnlyInline):
    model = CallbackAttempt
    fields = ["number", "started_at", "status_code", "error", "duration_ms"]


@admin.register(Job)
class JobAdmin(ReadOnlyAdmin):
    list_display = ["id", "account", "status", "progress", "partial", "created_at", "started_at", "completed_at"]
    list_filter = ["status", "partial"]
    search_fields = ["id", f"account__{Account.EMAIL_LOOKUP}"]
    date_hierarchy = "created_at"
    inlines = [ChunkInline]
    actions = ["retry_jobs", "cancel_jobs"]

    @admin.display(description="Progress")
    def progress(self, job: Job) -> str:
        return f"{job.processed} / {job.total} ({job.percent_processed}%)"

    @admin.action(description="Retry selected failed jobs")
    def retry_jobs(self, request: HttpRequest, queryset: QuerySet[Job]) -> None:
        done = sum(job_retry(job_id=job_id) for job_id in queryset.values_list("pk", flat=True))
        self._report(request, done, queryset.count(), "Retried", "failed")

    @admin.action(description="Cancel selected running jobs")
    def cancel_jobs(self, request: HttpRequest, queryset: QuerySet[Job]) -> None:
        done = sum(job_cancel(job_id=job_id) for job_id in queryset.values_list("pk", flat=True))
        self._report(request, done, queryset.count(), "Cancelled", "pending or processing")

    def _report(self, request: HttpRequest, done: int, selected: int, verb: str, eligible: str) -> None:
        self.message_user(request, f"{verb} {done} job(s).", messages.SUCCESS)
        if done < selected:
            self.message_user(request, f"Skipped {selected - done}: only {eligible} jobs qualify.", messages.WARNING)


@admin.register(CallbackDelivery)
class CallbackDeliveryAdmin(ReadOnlyAdmin):
    list_display = ["event_id", "job", "event", "state", "attempts", "created_at", "delivered_at"]
    list_filter = ["state", "event"]
    search_fields = ["event_id", "job__id"]
    inlines = [CallbackAttemptInline]
