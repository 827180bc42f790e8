from __future__ import annotations

from dataclasses import dataclass

from rest_framework import serializers

from apikit.exceptions import ApiError
from lib import outbound
from lib.fields import StrictCharField
from verification.engine.modes import VALIDATION_MODES, ValidationMode
from verification.engine.providers import PROVIDERS
from verification.engine.verdict import SubStatus

MAX_EMAIL_LENGTH = 1000
MAX_BATCH = 100
MODE_HELP = "`fast` (the default). `deep` is refused with 400 deep_mode_disabled: it is not available yet."
CALLBACK_HELP = (
    "Deep mode: where the `verification.resolved` event of an answer asked again later is POSTed "
    "(default: the account's callback URL, set in the portal)."
)


@dataclass(frozen=True, slots=True)
class VerifyArgs:
    emails: list[str]
    mode: str
    callback_url: str


class VerifyRequestSerializer(serializers.Serializer):
    """The body of POST /v1/verify, for the schema; `verify_request` applies the same rules."""

    # Any string gets a verdict (README, "Verify one address"), NUL characters included (verify_request takes them).
    email = StrictCharField(max_length=MAX_EMAIL_LENGTH, allow_blank=True, trim_whitespace=False)
    validation_mode = serializers.ChoiceField(
        choices=VALIDATION_MODES, default=ValidationMode.FAST, help_text=MODE_HELP
    )
    callback_url = serializers.URLField(required=False, max_length=outbound.MAX_CALLBACK_URL, help_text=CALLBACK_HELP)


class BatchRequestSerializer(serializers.Serializer):
    """The body of POST /v1/verify/batch, for the schema; `batch_request` applies the same rules."""

    emails = serializers.ListField(
        child=StrictCharField(max_length=MAX_EMAIL_LENGTH, allow_blank=True, trim_whitespace=False),
        min_length=1,
        max_length=MAX_BATCH,
        help_text=f"1 to {MAX_BATCH} addresses, each any string of up to {MAX_EMAIL_LENGTH} characters.",
    )
    validation_mode = serializers.ChoiceField(
        choices=VALIDATION_MODES, default=ValidationMode.FAST, help_text=MODE_HELP
    )
    callback_url = serializers.URLField(required=False, max_length=outbound.MAX_CALLBACK_URL, help_text=CALLBACK_HELP)


class ChecksSerializer(serializers.Serializer):
    syntax_valid = serializers.BooleanField()
    domain_valid = serializers.BooleanField()
    mx_found = serializers.BooleanField()
    smtp_valid = serializers.BooleanField(
        allow_null=True,
        help_text="Deep mode: whether the mailbox exists; null in fast mode or when the server would not say.",
    )
    is_disposable = serializers.BooleanField()
    is_role_based = serializers.BooleanField()
    is_catch_all = serializers.BooleanField(
        allow_null=True,
        help_text="Deep mode: whether the domain accepts mail for any address; null in fast mode or when unknown.",
    )
    is_free_provider = serializers.BooleanField()


class FeedbackSerializer(serializers.Serializer):
    outcome = serializers.ChoiceField(choices=["hard_bounce", "delivered"])
    occurred_at = serializers.DateTimeField()


class DeliverabilitySerializer(serializers.Serializer):
    estimate = serializers.FloatField(
        min_value=0, max_value=1, help_text="The probability that a message to the address is delivered."
    )
    basis = serializers.IntegerField(
        min_value=0, help_text="How many reported outcomes on the domain stand behind it (0: the global rate alone)."
    )


class VerificationResultSerializer(serializers.Serializer):
    email = serializers.CharField()
    status = serializers.ChoiceField(choices=["valid", "invalid", "risky", "unknown"])
    sub_status = serializers.ChoiceField(
        choices=[sub.value for sub in SubStatus],
        allow_null=True,
        help_text="Deep mode adds catch_all, mailbox_not_found, mailbox_disabled, mailbox_full, greylisted, "
        "smtp_blocked and smtp_unreachable. A bulk row whose person objected to being verified is "
        "address_objected (uncharged); POST /v1/verify answers it 451.",
    )
    validation_mode = serializers.ChoiceField(choices=list(VALIDATION_MODES))
    confidence = serializers.ChoiceField(choices=["high", "medium", "low"])
    score = serializers.IntegerField(min_value=0, max_value=100)
    checks = ChecksSerializer()
    did_you_mean = serializers.CharField(allow_null=True)
    mail_provider = serializers.ChoiceField(
        choices=list(PROVIDERS),
        allow_null=True,
        help_text="Who runs the domain's mail, from its MX hosts; null when none of these. Informational.",
    )
    feedback = FeedbackSerializer(
        allow_null=True,
        help_text="The reported outcome this verdict followed (docs/feedback.md): your own hard bounce or delivery "
        "within 90 days, or a hard bounce reported by two unrelated accounts within 30 days; null when none.",
    )
    deliverability = DeliverabilitySerializer(
        allow_null=True,
        help_text="Catch-all results only: the estimated delivery rate of the domain's addresses, from outcomes "
        "reported by every account, shrunk toward the global catch-all rate; `score` follows it. Null otherwise.",
    )
    cached = serializers.BooleanField()
    response_time_ms = serializers.IntegerField(min_value=0)
    verification_id = serializers.CharField(
        required=False,
        help_text="Only on a deep answer `unknown` for a temporary reason (greylisted, smtp_unreachable): it is "
        "asked again later; read it at GET /v1/verifications/{id}, or wait for its `verification.resolved` event.",
    )

    def get_fields(self) -> dict[str, serializers.Field]:
        # `is_valid` cannot be a class attribute: it would hide Serializer.is_valid().
        fields = super().get_fields()
        fields["is_valid"] = serializers.BooleanField()
        order = ["email", "is_valid", "status", "sub_status", "validation_mode", "confidence", "score", "checks"]
        return {name: fields.pop(name) for name in order} | fields


def verify_request(data: object) -> VerifyArgs:
    """The arguments of a verify body, refused as VerifyRequestSerializer would.

    Checked by hand: a DRF serializer deep-copies its fields on every instance, which was
    15% of a verification's time.
    """
    body = _object(data)
    email = body.get("email")
    if not isinstance(email, str):
        reason = "Must be a string." if "email" in body else "This field is required."
        raise ApiError(400, "invalid_request", f"email: {reason}", "email")
    return VerifyArgs([_email(email, "email")], _mode(body), _callback_url(body))


def batch_request(data: object) -> VerifyArgs:
    """The arguments of a batch body, refused as BatchRequestSerializer would."""
    body = _object(data)
    emails = body.get("emails")
    if not isinstance(emails, list) or not 1 <= len(emails) <= MAX_BATCH:
        reason = "This field is required." if "emails" not in body else f"Must be a list of 1 to {MAX_BATCH} strings."
        raise ApiError(400, "invalid_request", f"emails: {reason}", "emails")
    for email in emails:
        if not isinstance(email, str):
            raise ApiError(400, "invalid_request", "emails: Every item must be a string.", "emails")
    return VerifyArgs([_email(email, "emails") for email in emails], _mode(body), _callback_url(body))


def _callback_url(body: dict[str, object]) -> str:
    if "callback_url" not in body:
        return ""
    try:
        return outbound.callback_url_checked(body["callback_url"])
    except outbound.UnsafeUrl as error:
        raise ApiError(400, "invalid_callback_url", str(error), "callback_url") from None


def _object(data: object) -> dict[str, object]:
    if not isinstance(data, dict):
        raise ApiError(400, "invalid_request", f"The body must be a JSON object, not {type(data).__name__}.")
    return data


def _email(email: str, param: str) -> str:
    if len(email) > MAX_EMAIL_LENGTH:
        message = f"{param}: Ensure every address has no more than {MAX_EMAIL_LENGTH} characters."
        raise ApiError(400, "invalid_request", message, param)
    return email


def _mode(body: dict[str, object]) -> str:
    mode = body.get("validation_mode", ValidationMode.FAST)
    if not isinstance(mode, str) or mode not in VALIDATION_MODES:
        message = f"validation_mode: {mode!r} is not one of {', '.join(VALIDATION_MODES)}."
        raise ApiError(400, "invalid_request", message, "validation_mode")
    return mode


class ResolutionSerializer(serializers.Serializer):
    state = serializers.ChoiceField(
        choices=["pending", "resolved", "gave_up"],
        help_text="pending: asked again later; resolved: answered something other than unknown; gave_up: still "
        "unknown after the last attempt of the schedule.",
    )
    attempts = serializers.IntegerField(min_value=0, help_text="Times asked again so far.")
    next_attempt_at = serializers.DateTimeField(allow_null=True, help_text="When it is asked next; null once settled.")


class RetriedVerificationSerializer(VerificationResultSerializer):
    """A verification asked again later: its latest result and where its asking stands."""

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        for name in ("cached", "response_time_ms"):
            fields.pop(name)
        fields["verification_id"] = serializers.CharField()
        fields["resolution"] = ResolutionSerializer()
        return fields


class ResolvedEventSerializer(RetriedVerificationSerializer):
    """The body of a `verification.resolved` event: GET /v1/verifications/{id}'s answer, named."""

    def get_fields(self) -> dict[str, serializers.Field]:
        event = serializers.ChoiceField(choices=["verification.resolved"])
        event_id = serializers.CharField(help_text="The same on every retry (X-Service-Event-Id, webhook-id).")
        return {"event": event, "event_id": event_id, **super().get_fields()}
