"""The sending services' event formats, as their documentation gives them (docs/feedback.md, "Webhooks"),
turned into reports. An event type that says nothing about delivery (an open, a click, a deferral) is
ignored, never refused: a sending service retries what we refuse, forever."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from feedback.models import Outcome
from feedback.reports import Report, report_of
from lib.errors import DomainError
from lib.jsonbody import json_parsed

Parsed = list[Report | None]


class BadPayload(DomainError):
    message = "The body is not this sending service's event format."


class BadSignature(DomainError):
    """An event that is not proven to come from the sending service: answered 401, nothing stored."""

    code = "invalid_signature"
    message = "The Mailgun signature does not match the account's signing key."


# How far a signed Mailgun event's timestamp may be from our clock (docs/feedback.md, "Mailgun").
MAILGUN_WINDOW = timedelta(minutes=15)


def _report(email: object, outcome: str | None, moment: object, now: datetime) -> Report | None:
    if outcome is None:
        return None
    try:
        return report_of(email, outcome, moment, now=now, where="event")
    except DomainError:
        return None


def _unix(value: object) -> str | None:
    """A Unix time (SendGrid's, Mailgun's) as RFC 3339."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        return datetime.fromtimestamp(float(value), UTC).isoformat()
    except (ValueError, OverflowError, OSError):
        return None


def _iso(value: object) -> object:
    """Postmark's and SES's ISO 8601 times; Postmark writes 7 fractional digits, Python reads 6."""
    if isinstance(value, str) and "." in value:
        head, _, tail = value.partition(".")
        digits = len(tail) - len(tail.lstrip("0123456789"))
        return f"{head}.{tail[: min(digits, 6)]}{tail[digits:]}"
    return value


def sendgrid(body: Any, now: datetime) -> Parsed:
    """An array of events: delivered; bounce (type `bounce`: hard, `blocked`: soft); dropped for a bounced
    or invalid address; spamreport."""
    if not isinstance(body, list):
        raise BadPayload
    return [_report(e.get("email"), _sendgrid_outcome(e), _unix(e.get("timestamp")), now) for e in _objects(body)]


def _sendgrid_outcome(event: dict[str, Any]) -> str | None:
    kind = event.get("event")
    if kind == "bounce":
        return Outcome.SOFT_BOUNCE if event.get("type") == "blocked" else Outcome.HARD_BOUNCE
    if kind == "dropped":
        reason = str(event.get("reason", "")).lower()
        return Outcome.HARD_BOUNCE if "bounced address" in reason or reason == "invalid" else None
    return {"delivered": Outcome.DELIVERED, "spamreport": Outcome.COMPLAINT}.get(str(kind))


def mailgun(body: Any, now: datetime, signing_key: str = "") -> Parsed:
    """One event in `event-data`: delivered; failed (severity permanent or temporary); complained.
    Checked against the account's webhook signing key when it set one."""
    if not isinstance(body, dict) or not isinstance(body.get("event-data"), dict):
        raise BadPayload
    if signing_key:
        _mailgun_check(body.get("signature"), signing_key, now)
    event = body["event-data"]
    kind, severity = event.get("event"), event.get("severity")
    outcome = {
        "delivered": Outcome.DELIVERED,
        "complained": Outcome.COMPLAINT,
        "failed": Outcome.HARD_BOUNCE if severity == "permanent" else Outcome.SOFT_BOUNCE,
    }.get(str(kind))
    return [_report(event.get("recipient"), outcome, _unix(event.get("timestamp")), now)]


def _mailgun_check(signature: object, key: str, now: datetime) -> None:
    """Mailgun's scheme: HMAC-SHA256 of timestamp + token under the signing key, in hex; the timestamp
    within MAILGUN_WINDOW of now (the token's one use is checked where it is stored: mailgun_token)."""
    if not isinstance(signature, dict):
        raise BadSignature
    timestamp, token, given = (str(signature.get(name, "")) for name in ("timestamp", "token", "signature"))
    expected = hmac.new(key.encode(), (timestamp + token).encode(), hashlib.sha256).hexdigest()
    if not given or not hmac.compare_digest(expected, given):
        raise BadSignature
    if not timestamp.isascii() or not timestamp.isdigit() or len(timestamp) > 12:
        raise BadSignature("The Mailgun signature's timestamp is not a Unix time.")
    if abs(now.timestamp() - int(timestamp)) > MAILGUN_WINDOW.total_seconds():
        raise BadSignature(
            "The Mailgun signature's timestamp is more than 15 minutes from now: a replay, or a clock far off."
        )


def mailgun_token(body: dict[str, Any]) -> str:
    """The signature's token (of a body `mailgun` has checked)."""
    return str(body["signature"]["token"])


def postmark(body: Any, now: datetime) -> Parsed:
    """One record: Delivery; Bounce (Type HardBounce or SoftBounce); SpamComplaint. A delivery hook set as a
    server's DeliveryHookUrl (before modular webhooks) posts no RecordType: its DeliveredAt says what it is."""
    if not isinstance(body, dict):
        raise BadPayload
    kind = body.get("RecordType", "Delivery" if "DeliveredAt" in body else None)
    if kind == "Delivery":
        return [_report(body.get("Recipient"), Outcome.DELIVERED, _iso(body.get("DeliveredAt")), now)]
    outcome = {
        ("Bounce", "HardBounce"): Outcome.HARD_BOUNCE,
        ("Bounce", "SoftBounce"): Outcome.SOFT_BOUNCE,
        ("SpamComplaint", "SpamComplaint"): Outcome.COMPLAINT,
    }.get((str(kind), str(body.get("Type"))))
    return [_report(body.get("Email"), outcome, _iso(body.get("BouncedAt")), now)]


def ses(message: Any, now: datetime) -> Parsed:
    """The `Message` of an SNS notification: notificationType (or eventType) Delivery, Bounce (bounceType
    Permanent or Transient) or Complaint, one report per recipient."""
    if not isinstance(message, dict):
        raise BadPayload
    kind = message.get("notificationType", message.get("eventType"))
    part = _ses_parts.get(str(kind))
    if part is None:
        return [None]
    section = message.get(part[0])
    if not isinstance(section, dict):
        raise BadPayload
    outcome = part[1](section)
    return [_report(email, outcome, section.get("timestamp"), now) for email in part[2](section)]


def _ses_recipients(field: str) -> Callable[[dict[str, Any]], list[object]]:
    def recipients(section: dict[str, Any]) -> list[object]:
        found = section.get(field)
        if not isinstance(found, list):
            return []
        return [item.get("emailAddress") if isinstance(item, dict) else item for item in found]

    return recipients


def _ses_bounce(section: dict[str, Any]) -> str | None:
    return {"Permanent": Outcome.HARD_BOUNCE, "Transient": Outcome.SOFT_BOUNCE}.get(str(section.get("bounceType")))


_ses_parts: dict[str, tuple[str, Callable[[dict[str, Any]], str | None], Callable[[dict[str, Any]], list[object]]]] = {
    "Delivery": ("delivery", lambda _: Outcome.DELIVERED, _ses_recipients("recipients")),
    "Bounce": ("bounce", _ses_bounce, _ses_recipients("bouncedRecipients")),
    "Complaint": ("complaint", lambda _: Outcome.COMPLAINT, _ses_recipients("complainedRecipients")),
}


def sns_message(envelope: dict[str, Any]) -> Any:
    """The JSON `Message` an SNS Notification carries."""
    message = envelope.get("Message")
    if not isinstance(message, str):
        raise BadPayload
    return json_parsed(message.encode("utf-8", "surrogatepass"))


def _objects(items: list[Any]) -> list[dict[str, Any]]:
    return [item if isinstance(item, dict) else {} for item in items]
