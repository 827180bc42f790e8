from __future__ import annotations

from functools import cached_property

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from jobs.downloads import STATUSES, result_url
from jobs.models import BREAKDOWN_KEYS, Job
from jobs.worker import jobs_wait_for_resolver
from verification.engine.modes import VALIDATION_MODES
from verification.engine.providers import PROVIDERS


class BulkSubmitResponseSerializer(serializers.Serializer):
    id = serializers.CharField()
    status = serializers.CharField()
    total_emails = serializers.IntegerField()
    estimated_seconds = serializers.IntegerField(min_value=1)


class ProgressSerializer(serializers.Serializer):
    total = serializers.IntegerField()
    processed = serializers.IntegerField()
    valid = serializers.IntegerField()
    invalid = serializers.IntegerField()
    risky = serializers.IntegerField()
    unknown = serializers.IntegerField()


class CallbackBodySerializer(ProgressSerializer):
    """What the completion callback POSTs (docs/bulk.md, "Callback"): the progress counts and these."""

    event = serializers.ChoiceField(choices=["bulk.completed", "bulk.failed"])
    job_id = serializers.CharField()
    status = serializers.ChoiceField(choices=["completed", "failed"])
    result_url = serializers.CharField(allow_null=True, help_text="Valid 1 hour from this attempt; null when failed.")
    event_id = serializers.CharField(help_text="The X-Service-Event-Id header: the same on every retry.")

    def get_fields(self) -> dict[str, serializers.Field]:
        return with_partial(super().get_fields(), after="status")


class MailProviderCountsSerializer(serializers.Serializer):
    """Processed rows by `mail_provider`, every provider, zero when none. Rows whose mail no known
    provider runs (or whose domain was not looked up) are not counted here."""

    def get_fields(self) -> dict[str, serializers.Field]:
        return {name: serializers.IntegerField(min_value=0) for name in PROVIDERS}


class BreakdownSerializer(serializers.Serializer):
    """Processed rows by sub_status, then rows from a free provider, rows with a suggestion and
    rows by mail provider."""

    def get_fields(self) -> dict[str, serializers.Field]:
        counts = {
            key: serializers.IntegerField(min_value=0, source=f"breakdown_counts.{key}") for key in BREAKDOWN_KEYS
        }
        return {**counts, "mail_provider": MailProviderCountsSerializer(source="mail_provider_counts")}


class JobSerializer(serializers.Serializer):
    id = serializers.CharField()
    filename = serializers.CharField(allow_null=True, help_text="The uploaded file's base name.")
    status = serializers.ChoiceField(choices=Job.Status.choices)
    waiting_for = serializers.SerializerMethodField()
    validation_mode = serializers.ChoiceField(choices=list(VALIDATION_MODES))
    progress = ProgressSerializer(source="*")
    breakdown = BreakdownSerializer(source="*")
    credits_refunded = serializers.IntegerField(
        min_value=0,
        help_text="Credits given back at completion for rows that ended `unknown`, where the operator charges only "
        "for definitive answers (`charges_unknown: false` in GET /v1/account); else 0.",
    )
    result_download_url = serializers.SerializerMethodField()
    callback_url = serializers.SerializerMethodField()
    retention_days = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    completed_at = serializers.DateTimeField(allow_null=True)

    def get_fields(self) -> dict[str, serializers.Field]:
        return with_partial(super().get_fields(), after="progress")

    @extend_schema_field(
        serializers.ChoiceField(
            choices=["dns_resolver"],
            allow_null=True,
            help_text="Why a pending or processing job is not moving: `dns_resolver` while our DNS resolver "
            "is broken (no row is judged or charged; the job goes on by itself once it answers; a test key's "
            "job, which asks no resolver, never waits). Else null.",
        )
    )
    def get_waiting_for(self, job: Job) -> str | None:
        return "dns_resolver" if job.may_wait_for_resolver and self._resolver_holds_jobs else None

    @cached_property
    def _resolver_holds_jobs(self) -> bool:  # once per response: a list's jobs share one child serializer
        return jobs_wait_for_resolver()

    def get_result_download_url(self, job: Job) -> str | None:
        return result_url(job)

    def get_callback_url(self, job: Job) -> str | None:
        return job.callback_url or None

    @extend_schema_field(
        serializers.IntegerField(
            min_value=1,
            help_text="Days the job's files are kept once it finished: as asked at upload (`retention_days`), "
            "else the account's default, else the service's (30).",
        )
    )
    def get_retention_days(self, job: Job) -> int:
        return job.retention_days or settings.JOB_RETENTION_DAYS


def with_partial(fields: dict[str, serializers.Field], *, after: str) -> dict[str, serializers.Field]:
    """Add the `partial` field after `after`: it is also a Serializer attribute, so no class body can declare it."""
    items = list(fields.items())
    at = [name for name, _ in items].index(after) + 1
    partial = serializers.BooleanField(help_text="true when credits ran out before every row was processed.")
    return dict([*items[:at], ("partial", partial), *items[at:]])


class JobListQuerySerializer(serializers.Serializer):
    limit = serializers.IntegerField(min_value=1, max_value=100, default=20)
    starting_after = serializers.CharField(
        required=False,
        max_length=32,
        help_text="The id of one of your jobs: the page starts after it. Any other value, empty included, is 400.",
    )


class SharesSerializer(serializers.Serializer):
    valid = serializers.FloatField(min_value=0, max_value=1)
    invalid = serializers.FloatField(min_value=0, max_value=1)
    risky = serializers.FloatField(min_value=0, max_value=1)
    unknown = serializers.FloatField(min_value=0, max_value=1)


class EstimateSerializer(serializers.Serializer):
    sample_size = serializers.IntegerField(
        min_value=1, help_text="Addresses checked: at most 200, at most half the list."
    )
    population = serializers.IntegerField(help_text="The list's unique addresses the sample was drawn from.")
    shares = SharesSerializer(help_text="Each status's share of the sample, to the whole percent.")
    margin_of_error = serializers.FloatField(
        min_value=0, max_value=1, help_text="Each share is within this of the whole list's, at the confidence level."
    )
    confidence_level = serializers.FloatField(help_text="0.95")


class PreviewSerializer(serializers.Serializer):
    rows = serializers.IntegerField(help_text="Address rows before de-duplication.")
    unique = serializers.IntegerField()
    duplicates = serializers.IntegerField()
    invalid_syntax = serializers.IntegerField(help_text="Unique addresses that are not addresses at all.")
    email_column = serializers.JSONField(help_text="The header's name, or the 1-based number without a header row.")
    has_header = serializers.BooleanField()
    columns = serializers.ListField(child=serializers.CharField())
    sample = serializers.ListField(child=serializers.CharField(), help_text="Up to 5 normalised addresses.")
    credits_needed = serializers.IntegerField()
    credits_available = serializers.IntegerField()
    estimated_seconds = serializers.IntegerField(min_value=1)
    bulk_in_plan = serializers.BooleanField(
        help_text="Whether the account's plan can verify the list (Starter and above); if not, upgrade to clean it."
    )
    estimate = EstimateSerializer(
        allow_null=True,
        help_text="The list's likely quality from a fast check of a random sample; null when withheld.",
    )
    estimate_withheld = serializers.ChoiceField(
        choices=["too_few_addresses", "daily_limit_reached"],
        allow_null=True,
        help_text="Why there is no estimate: a list under the minimum size, or no evaluation left today.",
    )
    evaluations_left_today = serializers.IntegerField(
        min_value=0, help_text="New lists this account may still have evaluated in the next 24 hours."
    )


class ResultsQuerySerializer(serializers.Serializer):
    status = serializers.CharField(
        required=False,
        max_length=100,
        help_text="A comma-separated subset of valid, invalid, risky, unknown (default: all).",
    )
    columns = serializers.ChoiceField(choices=["verdict", "original"], default="verdict")

    def validate_status(self, value: str) -> list[str]:
        wanted = value.split(",")
        unknown = [name for name in wanted if name not in STATUSES]
        if unknown or not value:
            raise serializers.ValidationError(
                f"{unknown[0] if unknown else value!r} is not one of {', '.join(STATUSES)}."
            )
        return wanted
