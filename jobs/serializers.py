from __future__ import annotations

from rest_framework import serializers

from jobs.downloads import result_url
from jobs.models import Job


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
    """What the completion callback POSTs (spec section 6, CONTRACT section 6): the progress counts and these."""

    event = serializers.ChoiceField(choices=["bulk.completed", "bulk.failed"])
    job_id = serializers.CharField()
    status = serializers.ChoiceField(choices=["completed", "failed"])
    result_url = serializers.CharField(allow_null=True, help_text="Valid 1 hour from this attempt; null when failed.")
    event_id = serializers.CharField(help_text="The X-Service-Event-Id header: the same on every retry.")

    def get_fields(self) -> dict[str, serializers.Field]:
        return with_partial(super().get_fields(), after="status")


class JobSerializer(serializers.Serializer):
    id = serializers.CharField()
    status = serializers.ChoiceField(choices=Job.Status.choices)
    progress = ProgressSerializer(source="*")
    result_download_url = serializers.SerializerMethodField()
    callback_url = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    completed_at = serializers.DateTimeField(allow_null=True)

    def get_fields(self) -> dict[str, serializers.Field]:
        return with_partial(super().get_fields(), after="progress")

    def get_result_download_url(self, job: Job) -> str | None:
        return result_url(job)

    def get_callback_url(self, job: Job) -> str | None:
        return job.callback_url or None


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
