"""The members page's pending invitations: revoke one (its link stops working) or send it again."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from accounts.auditing import Event, audit
from accounts.decorators import account_required
from accounts.member_views import invitation_send
from accounts.models import Account, Invitation
from accounts.permissions import Action
from accounts.services import invitation_renew


def _pending(account: Account, invitation_id: int) -> Invitation:
    return get_object_or_404(account.invitations.filter(accepted_at__isnull=True), pk=invitation_id)


@account_required(Action.MEMBERS)
@require_POST
def invitation_revoke(request: HttpRequest, account: Account, invitation_id: int) -> HttpResponse:
    invitation = _pending(account, invitation_id)
    if invitation.revoke():
        audit(request, account, Event.MEMBER_INVITED, f"invitation of {invitation.email} revoked")
        messages.success(request, f"The invitation of {invitation.email} was revoked: its link no longer works.")
    return redirect("members")


@account_required(Action.MEMBERS)
@require_POST
def invitation_resend(request: HttpRequest, account: Account, invitation_id: int) -> HttpResponse:
    invitation = _pending(account, invitation_id)
    token = invitation_renew(invitation=invitation)
    if token is not None:
        invitation_send(request, invitation, settings.SITE_URL + reverse("invitation", args=[token]))
        audit(request, account, Event.MEMBER_INVITED, f"{invitation.email} as {invitation.role}, sent again")
        messages.success(request, f"Invitation sent again to {invitation.email}: the link works once, for 7 days.")
    return redirect("members")
