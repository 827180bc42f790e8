"""The shapes of POST /v1/privacy/erasures, for the schema; privacy/erasure.py applies the same rules."""

from __future__ import annotations

from rest_framework import serializers

from privacy.erasure import MAX_EMAILS


class ErasureRequestSerializer(serializers.Serializer):
    emails = serializers.ListField(
        child=serializers.CharField(max_length=1000),
        min_length=1,
        max_length=MAX_EMAILS,
        help_text="1 to 1,000 addresses.",
    )


class ErasedSerializer(serializers.Serializer):
    cached_verdicts = serializers.IntegerField(min_value=0, help_text="Cached verdicts deleted.")
    feedback_reports = serializers.IntegerField(min_value=0, help_text="Reported outcomes deleted.")
    idempotent_replies = serializers.IntegerField(min_value=0, help_text="Stored replies naming an address, deleted.")
    verifications_asked_again = serializers.IntegerField(
        min_value=0, help_text="Deep answers being asked again later (GET /v1/verifications/{id}), deleted."
    )
    valid_answers = serializers.IntegerField(
        min_value=0, help_text="Charged valid answers kept for the bounce guarantee, deleted (they refund nothing)."
    )
    job_result_rows = serializers.IntegerField(
        min_value=0, help_text="Rows taken out of finished jobs' result files (the files rewritten without them)."
    )
    export_files = serializers.IntegerField(
        min_value=0,
        help_text="Finished account exports whose ZIP was deleted, as it could hold what was erased: their status "
        "reads `expired`; ask for a new export. An export being built meanwhile is built again without it.",
    )


class ErasureResultSerializer(serializers.Serializer):
    erased = ErasedSerializer(help_text="How many went, by store.")


class ExportSerializer(serializers.Serializer):
    """An account export (privacy/export_apis.py renders `export_resource`'s dict through it)."""

    id = serializers.CharField(help_text="`exp_` and 24 characters.")
    status = serializers.ChoiceField(
        choices=["queued", "running", "done", "failed", "expired"],
        help_text="`expired` once a done export's 24 hours have passed (its file is deleted), or earlier once an "
        "erasure deleted its file (it could hold what was erased): ask for a new one.",
    )
    progress = serializers.IntegerField(min_value=0, max_value=100, help_text="Percent of the rows written.")
    rows_done = serializers.IntegerField(min_value=0, help_text="Rows written so far (each as JSON and as CSV).")
    rows_total = serializers.IntegerField(min_value=0, help_text="Rows to write, once the build has started.")
    size_bytes = serializers.IntegerField(min_value=0, allow_null=True, help_text="The ZIP's size once done.")
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    expires_at = serializers.DateTimeField(
        allow_null=True,
        help_text="When the download stops and the ZIP is deleted: 24 hours after it was done, or when an erasure "
        "deleted it.",
    )
    download_url = serializers.CharField(
        allow_null=True,
        help_text="While done and not expired: a signed link to the ZIP, no API key needed (the one mailed to "
        "the owner); null otherwise.",
    )
    failure = serializers.CharField(allow_null=True, help_text="Why it failed; null unless failed.")
