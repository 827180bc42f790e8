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


class ErasureResultSerializer(serializers.Serializer):
    erased = ErasedSerializer(help_text="How many went, by store.")
