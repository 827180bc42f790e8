"""The shapes of POST /v1/feedback, for the schema; feedback/reports.py applies the same rules."""

from __future__ import annotations

from rest_framework import serializers

from feedback.models import Outcome
from feedback.reports import MAX_EVENTS


class FeedbackEventSerializer(serializers.Serializer):
    email = serializers.CharField(help_text="The address the message went to.")
    outcome = serializers.ChoiceField(choices=Outcome.values)
    occurred_at = serializers.DateTimeField(
        required=False, help_text="RFC 3339 with its offset; now when left out. Future or over 365 days old: ignored."
    )


class FeedbackRequestSerializer(serializers.Serializer):
    events = FeedbackEventSerializer(many=True, help_text=f"1 to {MAX_EVENTS} events.")


class FeedbackResultSerializer(serializers.Serializer):
    accepted = serializers.IntegerField(
        min_value=0, help_text="Events taken (an event already reported is taken again and stored once)."
    )
    ignored = serializers.IntegerField(
        min_value=0, help_text="Events left out: not an address, or a time in the future or over 365 days ago."
    )
