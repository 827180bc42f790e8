"""Portal pages about the account itself: log-in, the account switch, two-factor policy, the audit log."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from accounts.auditing import audit
from accounts.decorators import ACCOUNT_SESSION_KEY, account_required
from accounts.forms import (
    LoginForm,
    SwitchAccountForm,
    ThrottledPasswordResetForm,
)
from accounts.models import (
    Account,
    AuditEvent,
    Membership,
    membership_for,
)
from accounts.permissions import Action
from accounts.two_factor import has_two_factor
from accounts.two_factor_views import second_step_needed

Event = AuditEvent.Action
AUDIT_EVENTS_PER_PAGE = 50


class PasswordResetView(auth_views.PasswordResetView):
    form_class = ThrottledPasswordResetForm  # links from SITE_URL, throttled

    def get_form(self, form_class: Any = None) -> Any:
        form: Any = super().get_form(form_class)
        form.request = self.request  # the throttle counts per client address too
        return form


class LoginView(auth_views.LoginView):
    form_class = LoginForm
    redirect_authenticated_user = True
    template_name = "accounts/login.html"

    def form_valid(self, form: Any) -> HttpResponse:
        """A right password signs in, unless the person has two-factor on: then the code comes first."""
        return second_step_needed(self.request, form.get_user(), self.get_success_url()) or super().form_valid(form)


@login_required
@require_POST
def account_switch(request: HttpRequest) -> HttpResponse:
    """The header's account switch: act for another account the user is a member of, from now on."""
    form = SwitchAccountForm(request.POST)
    chosen = str(form.cleaned_data["account"]) if form.is_valid() else None
    membership = membership_for(request.user, chosen)
    if membership is None or str(membership.account.public_id) != chosen:
        raise Http404("Not a member of that account.")
    request.session[ACCOUNT_SESSION_KEY] = chosen
    messages.success(request, f"You now act for {membership.account.email}'s account, as {membership.role}.")
    return redirect("dashboard")


@account_required(Action.TWO_FACTOR_POLICY)
@require_POST
def require_two_factor(request: HttpRequest, account: Account) -> HttpResponse:
    """The owner's switch: every member needs two-factor sign-in to use the portal for this account."""
    required = request.POST.get("required") == "on"
    if required and not has_two_factor(request.user):
        messages.error(request, "Turn on two-factor sign-in for yourself first (Security).")
        return redirect("members")
    account.require_two_factor = required
    account.save(update_fields=["require_two_factor"])
    state = "required of every member" if required else "no longer required"
    audit(request, account, Event.TWO_FACTOR_CHANGED, f"two-factor sign-in {state}")
    messages.success(request, f"Two-factor sign-in is {state}.")
    return redirect("members")


@account_required(Action.AUDIT)
def audit_log(request: HttpRequest, account: Account) -> HttpResponse:
    events = Paginator(account.audit_events.all(), AUDIT_EVENTS_PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "accounts/audit.html", {"account": account, "page": events})


def acting_membership(request: HttpRequest) -> Membership:
    membership: Membership = request.membership  # type: ignore[attr-defined]  # set by account_required
    return membership
