"""Portal pages about the team: members and their roles, invitations and joining by one."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.core.mail import send_mail
from django.db import IntegrityError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from accounts.auditing import audit
from accounts.decorators import ACCOUNT_SESSION_KEY, account_required
from accounts.forms import (
    InviteForm,
    NewMemberForm,
    RoleForm,
)
from accounts.models import (
    Account,
    AuditEvent,
    Invitation,
    Role,
)
from accounts.permissions import Action, role_may
from accounts.services import (
    InvitationRefused,
    MemberChangeRefused,
    invitation_accept,
    invitation_accept_as_new_user,
    invitation_create,
    invitation_for_token,
    member_remove,
    member_role_change,
)
from accounts.two_factor_views import reask_needed
from accounts.views import acting_membership
from lib.views import confirm_then

Event = AuditEvent.Action


@account_required(Action.MEMBERS)
def members(request: HttpRequest, account: Account) -> HttpResponse:
    return _members_page(request, account, InviteForm())


def _members_page(request: HttpRequest, account: Account, form: InviteForm) -> HttpResponse:
    context = {
        "account": account,
        "members": account.memberships.select_related("user"),
        "invitations": [i for i in account.invitations.filter(accepted_at__isnull=True) if i.is_open],
        "sole_owner": _sole_owner(account),
        "roles": Role.choices,
        "me": acting_membership(request),
        "form": form,
        "can_require_two_factor": role_may(acting_membership(request).role, Action.TWO_FACTOR_POLICY),
    }
    return render(request, "accounts/members.html", context)


@account_required(Action.MEMBERS)
@require_POST
def member_role(request: HttpRequest, account: Account, member_id: int) -> HttpResponse:
    membership = get_object_or_404(account.memberships.select_related("user"), pk=member_id)
    form = RoleForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose one of the roles.")
        return redirect("members")
    try:
        before = membership.role
        member_role_change(membership=membership, role=Role(form.cleaned_data["role"]), by=acting_membership(request))
    except MemberChangeRefused as refused:
        messages.error(request, refused.message)
    else:
        audit(request, account, Event.ROLE_CHANGED, f"{membership.user.email}: {before} → {membership.role}")
        messages.success(request, f"{membership.user.email} is now {membership.role}.")
    return redirect("members")


@account_required(Action.MEMBERS)
@require_http_methods(["GET", "POST"])
def member_remove_view(request: HttpRequest, account: Account, member_id: int) -> HttpResponse:
    membership = get_object_or_404(account.memberships.select_related("user"), pk=member_id)
    email = membership.user.email
    if (stale := reask_needed(request)) is not None:
        return stale

    def remove() -> str:
        revoked = member_remove(
            membership=membership, by=acting_membership(request)
        )  # MemberChangeRefused: shown, nothing done
        audit(request, account, Event.MEMBER_REMOVED, f"{email} ({membership.role}); {revoked} key(s) revoked")
        return f"{email} was removed; {revoked} API key(s) they created were revoked."

    return confirm_then(
        request,
        act=remove,
        done_url="members" if membership.user_id != request.user.pk else "dashboard",
        page={
            "title": f"Remove {email} from the account?",
            "body": "They lose access at once, and the API keys they created stop working.",
            "button": "Remove member",
            "cancel_url": "members",
        },
    )


@account_required(Action.MEMBERS)
@require_POST
def member_invite(request: HttpRequest, account: Account) -> HttpResponse:
    form = InviteForm(request.POST)
    if form.is_valid():
        try:
            invitation, token = invitation_create(account=account, by=acting_membership(request), **form.cleaned_data)
        except InvitationRefused as refused:
            form.add_error(refused.param if refused.param in form.fields else None, refused.message)
        else:
            invitation_send(request, invitation, settings.SITE_URL + reverse("invitation", args=[token]))
            audit(request, account, Event.MEMBER_INVITED, f"{invitation.email} as {invitation.role}")
            messages.success(request, f"Invitation sent to {invitation.email}: the link works once, for 7 days.")
            return redirect("members")
    return _members_page(request, account, form)


def _sole_owner(account: Account) -> int | None:
    """The membership id of the account's only owner (who can neither leave nor change role), if it has one only."""
    owners = list(account.memberships.filter(role=Role.OWNER).values_list("pk", flat=True)[:2])
    return owners[0] if len(owners) == 1 else None


def invitation_send(request: HttpRequest, invitation: Invitation, link: str) -> None:
    context = {"invitation": invitation, "link": link, "invited_by": request.user.email}  # type: ignore[union-attr]
    body = render_to_string("accounts/invitation_email.txt", context)
    send_mail(f"Join {invitation.account.email}'s account", body, None, [invitation.email])


@require_http_methods(["GET", "POST"])
@never_cache
def invitation(request: HttpRequest, token: str) -> HttpResponse:
    """The link from the invitation mail: join as the signed-in user, or choose a password first."""
    found = invitation_for_token(token)
    context: dict[str, Any] = {"invitation": found}
    if found is None:
        return render(request, "accounts/invitation.html", context, status=404)
    user = request.user
    if user.is_authenticated and user.username != found.email:
        return render(request, "accounts/invitation.html", context | {"wrong_user": True}, status=403)
    has_login = get_user_model().objects.filter(username=found.email).exists()
    form = NewMemberForm(request.POST or None, email=found.email)
    if request.method == "POST" and (user.is_authenticated or (not has_login and form.is_valid())):
        return _join(request, found, form)
    return render(request, "accounts/invitation.html", context | {"has_login": has_login, "form": form})


def _join(request: HttpRequest, found: Invitation, form: NewMemberForm) -> HttpResponse:
    try:
        if request.user.is_authenticated:
            membership = invitation_accept(invitation=found, user=request.user)
        else:
            membership = invitation_accept_as_new_user(invitation=found, password=form.cleaned_data["password"])
            login(request, membership.user, backend="django.contrib.auth.backends.ModelBackend")
    except (InvitationRefused, IntegrityError):
        return render(request, "accounts/invitation.html", {"invitation": None}, status=404)
    request.session[ACCOUNT_SESSION_KEY] = str(found.account.public_id)
    audit(request, found.account, Event.MEMBER_JOINED, f"{membership.user.email} as {membership.role}")
    messages.success(request, f"You joined {found.account.email}'s account as {membership.role}.")
    return redirect("dashboard")
