from __future__ import annotations

from rest_framework import serializers

from lib.fields import StrictCharField

MAX_EMAIL_LENGTH = 1000


class VerifyRequestSerializer(serializers.Serializer):
    # Any string gets a verdict (CONTRACT 4), NUL characters included: they make it invalid_syntax.
    email = StrictCharField(max_length=MAX_EMAIL_LENGTH, allow_blank=True, trim_whitespace=False, allow_nul=True)
    validation_mode = serializers.ChoiceField(choices=["fast", "deep"], default="fast")


class ChecksSerializer(serializers.Serializer):
    syntax_valid = serializers.BooleanField()
    domain_valid = serializers.BooleanField()
    mx_found = serializers.BooleanField()
    smtp_valid = serializers.BooleanField(allow_null=True)
    is_disposable = serializers.BooleanField()
    is_role_based = serializers.BooleanField()
    is_catch_all = serializers.BooleanField(allow_null=True)
    is_free_provider = serializers.BooleanField()


class VerificationResultSerializer(serializers.Serializer):
    email = serializers.CharField()
    status = serializers.ChoiceField(choices=["valid", "invalid", "risky", "unknown"])
    sub_status = serializers.ChoiceField(
        choices=["invalid_syntax", "no_mx_record", "disposable", "role_based", "dns_temporary_failure"],
        allow_null=True,
    )
    validation_mode = serializers.ChoiceField(choices=["fast", "deep"])
    confidence = serializers.ChoiceField(choices=["high", "medium", "low"])
    score = serializers.IntegerField(min_value=0, max_value=100)
    checks = ChecksSerializer()
    did_you_mean = serializers.CharField(allow_null=True)
    cached = serializers.BooleanField()
    response_time_ms = serializers.IntegerField(min_value=0)

    def get_fields(self) -> dict[str, serializers.Field]:
        # `is_valid` cannot be a class attribute: it would hide Serializer.is_valid().
        fields = super().get_fields()
        fields["is_valid"] = serializers.BooleanField()
        order = ["email", "is_valid", "status", "sub_status", "validation_mode", "confidence", "score", "checks"]
        return {name: fields.pop(name) for name in order} | fields
