"""The portal's Privacy page: an owner or admin erases addresses from the account, sets how long job
files are kept and where deep probes leave from; an owner exports the account (docs/privacy.md)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from accounts.decorators import account_required
from accounts.models import Account
from accounts.permissions import Action
from jobs.retention import retention_max_days
from lib.errors import DomainError
from privacy.exports import export_file, export_link, export_of
from privacy.forms import ErasureForm, ProbeRegionForm, RetentionForm
from privacy.models import AccountExport
from privacy.services import account_erasure, export_asked
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
        said = ", ".join(f"{store.replace('_', ' ')} {count}" for store, count in erased.items())
        messages.success(request, f"{len(emails)} {'address' if len(emails) == 1 else 'addresses'} erased: {said}.")
        return redirect("privacy")
    context = {"form": form, "retention": retention, "region": _region_form(account)}
    return _page(request, account, context, status=400 if form.errors else 200)


@account_required(Action.ERASE)
@require_POST
def retention_default(request: HttpRequest, account: Account) -> HttpResponse:
    """The account's default for how long a new job's files are kept (docs/bulk.md, "Retention")."""
    form = RetentionForm(request.POST, most=retention_max_days(account))
    if not form.is_valid():
        context = {"form": ErasureForm(), "retention": form, "region": _region_form(account)}
        return _page(request, account, context, status=400)
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
        return _page(request, account, context, status=400)
    account.probe_region = form.cleaned_data["probe_region"]
    account.save(update_fields=["probe_region"])
    messages.success(request, f"Saved: deep verification probes leave from {account.probe_region} region.")
    return redirect("privacy")


def _retention_form(account: Account) -> RetentionForm:
    return RetentionForm(initial={"job_retention_days": account.job_retention_days}, most=retention_max_days(account))


# The page lists the account's latest exports (rows are kept 30 days, then pruned).
EXPORTS_SHOWN = 5


def _page(request: HttpRequest, account: Account, context: dict[str, Any], *, status: int) -> HttpResponse:
    now = timezone.now()
    exports = [
        (export, export.shown_status(now)) for export in AccountExport.objects.filter(account=account)[:EXPORTS_SHOWN]
    ]
    return render(request, "privacy/privacy.html", {**context, "exports": exports}, status=status)


@account_required(Action.EXPORT)
@require_POST
def export_ask(request: HttpRequest, account: Account) -> HttpResponse:
    """An owner asks for the account's export; built by a worker, its link mailed (docs/privacy.md, "Export")."""
    _, created = export_asked(request=request, account=account)
    if created:
        to = getattr(request.user, "email", "you")
        messages.success(request, f"Export asked for: when it is ready, a link valid 24 hours goes to {to}.")
    else:
        messages.info(request, "An export is already being built: it is listed below.")
    return redirect("privacy")


@account_required(Action.EXPORT)
def export_download(request: HttpRequest, account: Account, export_id: str) -> HttpResponse:
    """The export's ZIP through its signed link; another account's export is 404."""
    try:
        export_file(export := export_of(account, export_id), now=timezone.now())
    except DomainError as refusal:
        if refusal.code == "not_found":
            raise Http404(refusal.message) from None
        messages.error(request, refusal.message)
        return redirect("privacy")
    return redirect(export_link(export))
