"""Recording reported outcomes, and the secret URLs the sending services post them to."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import quote

from django.conf import settings
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from accounts.models import Account
from feedback.esp import BadSignature
from feedback.models import KEPT, FeedbackEvent, FeedbackInbox, MailgunToken
from feedback.reports import Report, events_of, report_of
from lib.address_keys import address_key

PROVIDERS = ("sendgrid", "mailgun", "postmark", "ses")
# Each sending service as it names itself, for the portal.
PROVIDER_NAMES = {"sendgrid": "SendGrid", "mailgun": "Mailgun", "postmark": "Postmark", "ses": "Amazon SES"}


@dataclass(frozen=True, slots=True)
class Tally:
    accepted: int
    ignored: int

    def to_dict(self) -> dict[str, int]:
        return {"accepted": self.accepted, "ignored": self.ignored}


def feedback_record(*, account: Account, reports: list[Report | None], authenticated: bool = False) -> Tally:
    """Store the reports (None: one ignored). The same report twice is stored once: accepted both times.
    `authenticated`: they came as a sending service's event whose signature or credentials held."""
    kept = [report for report in reports if report is not None]
    ignored = len(reports) - len(kept)
    rows = [
        FeedbackEvent(
            account=account,
            address_key=address_key(report.email),
            domain=report.domain,
            outcome=report.outcome,
            occurred_at=report.occurred_at,
            authenticated=authenticated,
            expires_at=report.occurred_at + KEPT,
        )
        for report in kept
    ]
    with transaction.atomic():
        FeedbackEvent.objects.bulk_create(rows, ignore_conflicts=True)
    return Tally(len(kept), ignored)


# A token is remembered well past the 15 minutes its signature is believed (docs/feedback.md, "Mailgun").
TOKENS_KEPT = timedelta(hours=24)


def feedback_record_signed(*, inbox: FeedbackInbox, token: str, reports: list[Report | None]) -> Tally:
    """A signed Mailgun event's reports, stored only when its token was never seen: a replay is refused
    (BadSignature) and stores nothing; the token and the reports are kept together or not at all."""
    try:
        with transaction.atomic():
            MailgunToken.objects.create(inbox=inbox, token=token, expires_at=timezone.now() + TOKENS_KEPT)
            return feedback_record(account=inbox.account, reports=reports, authenticated=True)
    except IntegrityError:
        raise BadSignature("This signed Mailgun event was received before: a replay.") from None


def feedback_record_body(*, account: Account, body: object, store: bool = True) -> Tally:
    """POST /v1/feedback: every event checked before any is stored, so a refused body changes nothing.
    A test key's events (`store=False`) are checked and counted only."""
    now = timezone.now()
    reports = [
        report_of(event.get("email"), event.get("outcome"), event.get("occurred_at"), now=now, where=f"events[{i}]")
        for i, event in enumerate(events_of(body))
    ]
    if not store:
        kept = sum(report is not None for report in reports)
        return Tally(kept, len(reports) - kept)
    return feedback_record(account=account, reports=reports)


def inbox_of(account: Account) -> FeedbackInbox:
    inbox, _ = FeedbackInbox.objects.get_or_create(account=account)
    return inbox


def webhook_urls(account: Account) -> dict[str, str]:
    """The account's secret URL for each sending service (GET /v1/account's `feedback_webhooks`); Postmark's
    carries the account's basic-auth credentials when it set them, as Postmark takes them."""
    inbox = inbox_of(account)
    urls = {
        provider: settings.SITE_URL + reverse("feedback-webhook", args=[provider, inbox.token])
        for provider in PROVIDERS
    }
    if inbox.postmark_username:
        scheme, _, rest = urls["postmark"].partition("://")
        credentials = f"{quote(inbox.postmark_username, safe='')}:{quote(inbox.postmark_password, safe='')}"
        urls["postmark"] = f"{scheme}://{credentials}@{rest}"
    return urls


def inbox_rotate(*, account: Account) -> FeedbackInbox:
    """A new token: the old URLs answer 404 from now on."""
    inbox = inbox_of(account)
    inbox.rotate()
    return inbox
