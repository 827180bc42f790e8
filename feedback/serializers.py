"""The shapes of POST /v1/feedback, for the schema; feedback/reports.py applies the same rules."""

from __future__ import annotations

from rest_framework import serializers

from feedback.models import Outcome
from feedback.reports import MAX_EVENTS


class FeedbackEventSerializer(serializers.Serializer):
    email = serializers.CharField(help_text="The address the message went to.")
    outcome = serializers.ChoiceField(choices=Outcome.values)
    occurred_at = serializers.DateTimeField(
        required=False,
        help_text="RFC 3339 (YYYY-MM-DDTHH:MM:SS[.fraction] then Z or ±HH:MM); now when left out. Anything "
        "else, a future time or one over 365 days old: ignored (counted in `ignored`).",
    )


class FeedbackRequestSerializer(serializers.Serializer):
    events = FeedbackEventSerializer(many=True, help_text=f"1 to {MAX_EVENTS} events.")


class FeedbackResultSerializer(serializers.Serializer):
    accepted = serializers.IntegerField(
        min_value=0, help_text="Events taken (an event already reported is taken again and stored once)."
    )
    ignored = serializers.IntegerField(
        min_value=0,
        help_text="Events left out: not an address, a time that is not RFC 3339, in the future or over 365 days ago.",
    )
