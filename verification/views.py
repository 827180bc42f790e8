from __future__ import annotations

from dataclasses import dataclass, fields

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_http_methods

from accounts.decorators import account_required
from accounts.models import Account
from accounts.permissions import Action
from accounts.plans import SIGNUP_CREDITS
from billing.services import InsufficientCredits
from verification.engine import Verdict
from verification.engine.providers import PROVIDER_NAMES
from verification.engine.reasons import verdict_reason
from verification.forms import VerifyForm
from verification.models import RetriedVerification
from verification.services import AddressObjected, verification_run

# Each check's label, and the value that is good news for the sender (None: neither, just a fact).
CHECKS: dict[str, tuple[str, bool | None]] = {
    "syntax_valid": ("Syntax is valid", True),
    "domain_valid": ("Domain exists", True),
    "mx_found": ("Mail server (MX) found", True),
    "smtp_valid": ("Mailbox accepted (SMTP)", True),
    "is_disposable": ("Disposable domain", False),
    "is_role_based": ("Role address (info@, sales@ …)", False),
    "is_catch_all": ("Catch-all domain", False),
    "is_free_provider": ("Free email provider", None),
}


@dataclass(frozen=True, slots=True)
class CheckRow:
    label: str
    value: bool | None
    tone: str  # good, bad, fact (neither), unchecked
    note: str = ""  # said instead of the value


@account_required(Action.VERIFY)
@require_http_methods(["GET", "POST"])
def verify(request: HttpRequest, account: Account) -> HttpResponse:
    """One address, one credit: the same service, cache and charge as POST /v1/verify."""
    form = VerifyForm(request.POST or None, deep=settings.VERIFIER_DEEP_MODE)
    context: dict[str, object] = {"account": account, "form": form, "charges_unknown": settings.VERIFIER_CHARGE_UNKNOWN}
    if request.method == "POST" and form.is_valid():
        try:
            email, mode = form.cleaned_data["email"], form.mode
            result = verification_run(account=account, email=email, mode=mode, source="portal")
        except AddressObjected as error:
            form.add_error("email", error.message)
        except InsufficientCredits:
            # Said in the panel (verification/_no_credits.html): an unconfirmed sign-up's credits come with its link.
            context.update(no_credits=True, signup_credits=SIGNUP_CREDITS)
        else:
            verdict = result.verdict
            provider = PROVIDER_NAMES.get(verdict.mail_provider or "")
            reason = verdict_reason(verdict.sub_status, verdict.did_you_mean)
            context.update(verdict=verdict, cached=result.cached, checks=check_rows(verdict), provider=provider)
            context.update(charged=result.charged, retried=_retried(account, result.verification_id))
            context.update(reason=reason)
    # HtmxMiddleware sets request.htmx; it is falsy unless htmx sent the request.
    partial = bool(getattr(request, "htmx", False))
    template = "verification/_verify_panel.html" if partial else "verification/verify.html"
    return render(request, template, context)


@account_required(Action.VERIFY)
@require_GET
def verification_resolution(request: HttpRequest, account: Account, verification_id: str) -> HttpResponse:
    """The part of the verify page that says how an answer asked again later stands; htmx polls it
    until it settles."""
    retried = _retried(account, verification_id)
    if retried is None:
        raise Http404
    return render(request, "verification/_resolution.html", {"retried": retried})


def _retried(account: Account, verification_id: str | None) -> RetriedVerification | None:
    if verification_id is None:
        return None
    return RetriedVerification.objects.filter(account=account, pk=verification_id).first()


def check_rows(verdict: Verdict) -> list[CheckRow]:
    rows = []
    for field in fields(verdict.checks):
        label, good_when = CHECKS[field.name]
        value = getattr(verdict.checks, field.name)
        if field.name == "is_disposable" and value and verdict.did_you_mean:
            # a typo domain, not a throwaway inbox to the sender: the reason above says which
            rows.append(CheckRow(label, value, "fact", "on a throwaway list, as typo domains often are"))
        else:
            rows.append(CheckRow(label, value, _tone(value, good_when)))
    return rows


def _tone(value: bool | None, good_when: bool | None) -> str:
    if value is None:
        return "unchecked"
    if good_when is None:
        return "fact"
    return "good" if value == good_when else "bad"
