"""The portal's Privacy page: an owner or admin erases addresses from the account (docs/privacy.md)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from accounts.decorators import account_required
from accounts.models import Account
from accounts.permissions import Action
from jobs.retention import retention_max_days
from privacy.forms import ErasureForm, ProbeRegionForm, RetentionForm
from privacy.services import account_erasure
from verification.egresses import egresses_configured


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
    context = {"form": form, "retention": retention, "region": _region_form(account)}
    return render(request, "privacy/privacy.html", context, status=400 if form.errors else 200)


@account_required(Action.ERASE)
@require_POST
def retention_default(request: HttpRequest, account: Account) -> HttpResponse:
    """The account's default for how long a new job's files are kept (docs/bulk.md, "Retention")."""
    form = RetentionForm(request.POST, most=retention_max_days(account))
    if not form.is_valid():
        context = {"form": ErasureForm(), "retention": form, "region": _region_form(account)}
        return render(request, "privacy/privacy.html", context, status=400)
    account.job_retention_days = form.cleaned_data["job_retention_days"]
    account.save(update_fields=["job_retention_days"])
    messages.success(request, "Saved: new jobs keep their files that long.")
    return redirect("privacy")


def _region_form(account: Account, data: Any = None) -> ProbeRegionForm:
    regions = sorted({egress.region for egress in egresses_configured() if egress.region})
    return ProbeRegionForm(data, initial={"probe_region": account.probe_region}, regions=regions)


@account_required(Action.ERASE)
@require_POST
def probe_region(request: HttpRequest, account: Account) -> HttpResponse:
    """Where the account's deep sessions may leave from (docs/privacy.md, "Probe region")."""
    form = _region_form(account, request.POST)
    if not form.is_valid():
        context = {"form": ErasureForm(), "retention": _retention_form(account), "region": form}
        return render(request, "privacy/privacy.html", context, status=400)
    account.probe_region = form.cleaned_data["probe_region"]
    account.save(update_fields=["probe_region"])
    messages.success(request, f"Saved: deep verification probes leave from {account.probe_region} region.")
    return redirect("privacy")


def _retention_form(account: Account) -> RetentionForm:
    return RetentionForm(initial={"job_retention_days": account.job_retention_days}, most=retention_max_days(account))
