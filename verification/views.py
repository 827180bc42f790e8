from __future__ import annotations

from dataclasses import fields

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from accounts.decorators import account_required
from accounts.models import Account
from billing.services import InsufficientCredits
from verification.engine import Verdict
from verification.forms import VerifyForm
from verification.services import verification_check

CHECK_LABELS = {
    "syntax_valid": "Syntax is valid",
    "domain_valid": "Domain exists",
    "mx_found": "Mail server (MX) found",
    "smtp_valid": "Mailbox accepted (SMTP)",
    "is_disposable": "Disposable domain",
    "is_role_based": "Role address (info@, sales@ …)",
    "is_catch_all": "Catch-all domain",
    "is_free_provider": "Free email provider",
}


@account_required
@require_http_methods(["GET", "POST"])
def verify(request: HttpRequest, account: Account) -> HttpResponse:
    """One address, one credit: the same service, cache and charge as POST /v1/verify."""
    form = VerifyForm(request.POST or None)
    context: dict[str, object] = {"account": account, "form": form}
    if request.method == "POST" and form.is_valid():
        try:
            verdict, cached = verification_check(account=account, email=form.cleaned_data["email"])
        except InsufficientCredits:
            form.add_error(None, "You have no credits left, so this address was not checked. See Billing for more.")
        else:
            context.update(verdict=verdict, cached=cached, checks=check_rows(verdict))
    # HtmxMiddleware sets request.htmx; it is falsy unless htmx sent the request.
    partial = bool(getattr(request, "htmx", False))
    template = "verification/_verify_panel.html" if partial else "verification/verify.html"
    return render(request, template, context)


def check_rows(verdict: Verdict) -> list[tuple[str, bool | None]]:
    return [(CHECK_LABELS[field.name], getattr(verdict.checks, field.name)) for field in fields(verdict.checks)]
