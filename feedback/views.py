"""The portal's Feedback page: the webhook URLs to paste into a sending service, a CSV upload, rotation."""

from __future__ import annotations

from django.contrib import messages
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from accounts.auditing import Event, audit
from accounts.decorators import account_required
from accounts.models import Account
from accounts.permissions import Action
from feedback.forms import FeedbackUploadForm, MailgunKeyForm
from feedback.models import FeedbackEvent
from feedback.reports import csv_reports
from feedback.services import PROVIDER_NAMES, feedback_record, inbox_of, inbox_rotate, webhook_urls
from lib.errors import DomainError
from lib.views import confirm_then

MAX_UPLOAD_BYTES = 2 * 1024 * 1024
# The inbox's fields that prove a sending service's events (feedback/signatures.py, feedback/esp.py).
CREDENTIALS = ("mailgun_signing_key", "sendgrid_verification_key", "postmark_username", "postmark_password")


@account_required(Action.SECRET)
def feedback_page(request: HttpRequest, account: Account) -> HttpResponse:
    return _page(request, account, FeedbackUploadForm())


def _page(request: HttpRequest, account: Account, form: FeedbackUploadForm, status: int = 200) -> HttpResponse:
    inbox = inbox_of(account)
    counts = dict(
        FeedbackEvent.objects.filter(account=account).values_list("outcome").annotate(n=Count("id")).order_by()
    )
    context = {
        # Each URL also in its path's pieces, so a narrow page breaks it after a slash, not mid-word.
        "webhooks": [
            (provider, PROVIDER_NAMES[provider], url, url.split("/")) for provider, url in webhook_urls(account).items()
        ],
        "form": form,
        "key_form": MailgunKeyForm(initial={name: getattr(inbox, name) for name in CREDENTIALS}),
        "counts": counts,
        "total": sum(counts.values()),
    }
    return render(request, "feedback/feedback.html", context, status=status)


@account_required(Action.VERIFY)
@require_POST
def feedback_upload(request: HttpRequest, account: Account) -> HttpResponse:
    """The same rules and store as POST /v1/feedback: a refused file changes nothing."""
    form = FeedbackUploadForm(request.POST, request.FILES)
    if not form.is_valid():
        return _page(request, account, form, status=400)
    upload = form.cleaned_data["file"]
    try:
        if upload.size > MAX_UPLOAD_BYTES:
            raise DomainError("The file is over 2 MB: split it.", "file")
        text = upload.read().decode("utf-8-sig")
        reports = csv_reports(text, now=timezone.now())
    except UnicodeDecodeError:
        form.add_error("file", "The file is not UTF-8 text.")
        return _page(request, account, form, status=400)
    except DomainError as error:
        form.add_error("file", error.message)
        return _page(request, account, form, status=400)
    tally = feedback_record(account=account, reports=reports)
    messages.success(request, f"{tally.accepted} events taken, {tally.ignored} ignored.")
    return redirect("feedback")


@account_required(Action.SECRET)
@require_POST
def feedback_mailgun_key(request: HttpRequest, account: Account) -> HttpResponse:
    """The keys and credentials that prove each sending service's events, saved together."""
    form = MailgunKeyForm(request.POST)
    if form.is_valid():
        inbox = inbox_of(account)
        for name in CREDENTIALS:
            setattr(inbox, name, str(form.cleaned_data.get(name, "")).strip())
        inbox.save(update_fields=list(CREDENTIALS))
        detail = "; ".join(f"{name}: {'set' if getattr(inbox, name) else 'cleared'}" for name in CREDENTIALS)
        audit(request, account, Event.MAILGUN_KEY_CHANGED, detail)
        messages.success(request, "Webhook keys saved.")
    else:
        messages.error(request, " ".join(str(error) for errors in form.errors.values() for error in errors))
    return redirect("feedback")


@account_required(Action.SECRET)
@require_http_methods(["GET", "POST"])
def feedback_rotate(request: HttpRequest, account: Account) -> HttpResponse:
    def rotate() -> None:
        inbox_rotate(account=account)
        audit(request, account, Event.FEEDBACK_URLS_ROTATED)

    return confirm_then(
        request,
        act=rotate,
        done_message="New webhook URLs made. The old ones answer 404 from now on: update your sending service.",
        done_url="feedback",
        page={
            "title": "Make new webhook URLs?",
            "body": "The URLs your sending services post to stop working at once; paste the new ones in.",
            "button": "Make new URLs",
            "cancel_url": "feedback",
        },
    )
