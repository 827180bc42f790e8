"""The portal's Privacy page: an owner or admin erases addresses from the account (docs/privacy.md)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from accounts.decorators import account_required
from accounts.models import Account
from accounts.permissions import Action
from jobs.retention import retention_max_days
from privacy.forms import ErasureForm, RetentionForm
from privacy.services import account_erasure


@account_required(Action.ERASE)
@require_http_methods(["GET", "POST"])
def privacy_page(request: HttpRequest, account: Account) -> HttpResponse:
    form = ErasureForm(request.POST or None)
    retention = RetentionForm(
        initial={"job_retention_days": account.job_retention_days}, most=retention_max_days(account)
    )
    if request.method == "POST" and form.is_valid():
        emails = form.cleaned_data["emails"]
        erased = account_erasure(request=request, account=account, emails=emails)
        said = ", ".join(f"{count} {store.replace('_', ' ')}" for store, count in erased.items())
        messages.success(request, f"{len(emails)} addresses erased: {said}.")
        return redirect("privacy")
    context = {"form": form, "retention": retention}
    return render(request, "privacy/privacy.html", context, status=400 if form.errors else 200)


@account_required(Action.ERASE)
@require_POST
def retention_default(request: HttpRequest, account: Account) -> HttpResponse:
    """The account's default for how long a new job's files are kept (docs/bulk.md, "Retention")."""
    form = RetentionForm(request.POST, most=retention_max_days(account))
    if not form.is_valid():
        context = {"form": ErasureForm(), "retention": form}
        return render(request, "privacy/privacy.html", context, status=400)
    account.job_retention_days = form.cleaned_data["job_retention_days"]
    account.save(update_fields=["job_retention_days"])
    messages.success(request, "Saved: new jobs keep their files that long.")
    return redirect("privacy")
