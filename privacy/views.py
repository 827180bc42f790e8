"""The portal's Privacy page: an owner or admin erases addresses from the account (docs/privacy.md)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from accounts.decorators import account_required
from accounts.models import Account
from accounts.permissions import Action
from privacy.forms import ErasureForm
from privacy.services import account_erasure


@account_required(Action.ERASE)
@require_http_methods(["GET", "POST"])
def privacy_page(request: HttpRequest, account: Account) -> HttpResponse:
    form = ErasureForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        emails = form.cleaned_data["emails"]
        erased = account_erasure(request=request, account=account, emails=emails)
        said = ", ".join(f"{count} {store.replace('_', ' ')}" for store, count in erased.items())
        messages.success(request, f"{len(emails)} addresses erased: {said}.")
        return redirect("privacy")
    return render(request, "privacy/privacy.html", {"form": form}, status=400 if form.errors else 200)
