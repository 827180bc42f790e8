"""Portal pages about the account itself: log-in, the account switch, members, keys, signing secret."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.mail import send_mail
from django.core.paginator import Paginator
from django.db import IntegrityError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from accounts.auditing import audit
from accounts.decorators import ACCOUNT_SESSION_KEY, account_required
from accounts.forms import (
    ApiKeyForm,
    InviteForm,
    LoginForm,
    NewMemberForm,
    RoleForm,
    SwitchAccountForm,
    ThrottledPasswordResetForm,
)
from accounts.models import (
    SECRET_ROTATION_OVERLAP,
    Account,
    ApiKey,
    AuditEvent,
    Invitation,
    Membership,
    Role,
    membership_for,
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
from accounts.two_factor import has_two_factor
from accounts.two_factor_views import reask_needed, second_step_needed

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


@account_required(Action.MEMBERS)
def members(request: HttpRequest, account: Account) -> HttpResponse:
    return _members_page(request, account, InviteForm())


def _members_page(request: HttpRequest, account: Account, form: InviteForm) -> HttpResponse:
    context = {
        "account": account,
        "members": account.memberships.select_related("user"),
        "invitations": [i for i in account.invitations.filter(accepted_at__isnull=True) if i.is_open],
        "roles": Role.choices,
        "me": _me(request),
        "form": form,
        "can_require_two_factor": role_may(_me(request).role, Action.TWO_FACTOR_POLICY),
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
        member_role_change(membership=membership, role=Role(form.cleaned_data["role"]), by=_me(request))
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
    if request.method == "POST":
        try:
            revoked = member_remove(membership=membership, by=_me(request))
        except MemberChangeRefused as refused:
            messages.error(request, refused.message)
        else:
            audit(request, account, Event.MEMBER_REMOVED, f"{email} ({membership.role}); {revoked} key(s) revoked")
            messages.success(request, f"{email} was removed; {revoked} API key(s) they created were revoked.")
        return redirect("members" if membership.user_id != request.user.pk else "dashboard")
    page = {
        "title": f"Remove {email} from the account?",
        "body": "They lose access at once, and the API keys they created stop working.",
        "button": "Remove member",
        "cancel_url": "members",
    }
    return render(request, "confirm.html", page)


@account_required(Action.MEMBERS)
@require_POST
def member_invite(request: HttpRequest, account: Account) -> HttpResponse:
    form = InviteForm(request.POST)
    if form.is_valid():
        try:
            invitation, token = invitation_create(account=account, by=_me(request), **form.cleaned_data)
        except InvitationRefused as refused:
            form.add_error(refused.param if refused.param in form.fields else None, refused.message)
        else:
            _send_invitation(request, invitation, settings.SITE_URL + reverse("invitation", args=[token]))
            audit(request, account, Event.MEMBER_INVITED, f"{invitation.email} as {invitation.role}")
            messages.success(request, f"Invitation sent to {invitation.email}: the link works once, for 7 days.")
            return redirect("members")
    return _members_page(request, account, form)


def _send_invitation(request: HttpRequest, invitation: Invitation, link: str) -> None:
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


def _me(request: HttpRequest) -> Membership:
    membership: Membership = request.membership  # type: ignore[attr-defined]  # set by account_required
    return membership


@account_required(Action.KEYS)
@require_http_methods(["GET", "POST"])
def keys(request: HttpRequest, account: Account) -> HttpResponse:
    form = ApiKeyForm(request.POST or None)
    new_key = None
    full = request.POST.get("scope", ApiKey.Scope.FULL) in ("", ApiKey.Scope.FULL)
    if request.method == "POST" and full and (stale := reask_needed(request)) is not None:
        messages.info(request, "A full key needs your password again; then create it once more.")
        return stale
    if request.method == "POST" and form.is_valid():
        # Rendered in this response only: the raw key is never stored, so it cannot be shown again.
        key, raw = ApiKey.issue(
            account=account,
            name=form.cleaned_data["name"],
            created_by=request.user,
            key_mode=form.cleaned_data["mode"],
            **form.limits(),
        )
        new_key = {"key": key, "raw": raw}
        audit(request, account, Event.KEY_CREATED, f"{key.prefix}… “{key.name}”, scope {key.scope}")
        form = ApiKeyForm()
    context = {
        "account": account,
        "form": form,
        "keys": account.api_keys.select_related("created_by"),
        "new_key": new_key,
    }
    return render(request, "accounts/keys.html", context)


@account_required(Action.KEYS)
@require_http_methods(["GET", "POST"])
def key_revoke(request: HttpRequest, account: Account, key_id: int) -> HttpResponse:
    key = get_object_or_404(account.api_keys, pk=key_id)
    if not key.is_active:
        messages.info(request, f"The key “{key.name}” was already revoked.")
        return redirect("keys")

    def revoke() -> None:
        key.revoke()
        audit(request, account, Event.KEY_REVOKED, f"{key.prefix}… “{key.name}”")

    return confirm_then(
        request,
        act=revoke,
        done_message=f"The key “{key.name}” is revoked. Requests using it now get 401 invalid_api_key.",
        done_url="keys",
        page={
            "title": f"Revoke the key “{key.name}”?",
            "body": f"Requests signed with {key.prefix}… will be refused at once. This cannot be undone.",
            "button": "Revoke key",
            "cancel_url": "keys",
        },
    )


@account_required(Action.SECRET)
def signing_secret(request: HttpRequest, account: Account) -> HttpResponse:
    secrets = account.active_signing_secrets()
    previous = secrets[1] if len(secrets) > 1 else None
    rotated_at = account.secret_rotated_at
    overlap_ends = rotated_at + SECRET_ROTATION_OVERLAP if previous and rotated_at else None
    context = {"account": account, "previous_secret": previous, "overlap_ends": overlap_ends}
    return render(request, "accounts/signing_secret.html", context)


@account_required(Action.SECRET)
@require_http_methods(["GET", "POST"])
def signing_secret_rotate(request: HttpRequest, account: Account) -> HttpResponse:
    if (stale := reask_needed(request)) is not None:
        return stale

    def rotate() -> None:
        account.rotate_signing_secret()
        audit(request, account, Event.SECRET_ROTATED)

    return confirm_then(
        request,
        act=rotate,
        done_message="New signing secret created. Callbacks carry both signatures for the next 24 hours.",
        done_url="signing-secret",
        page={
            "title": "Rotate the signing secret?",
            "body": "A new secret signs callbacks from now on. For 24 hours they carry a second v1 signature "
            "made with the current secret, so your receiver keeps working while you update it.",
            "button": "Rotate secret",
            "cancel_url": "signing-secret",
        },
    )


def confirm_then(
    request: HttpRequest, *, act: Callable[[], None], done_message: str, done_url: str, page: dict[str, str]
) -> HttpResponse:
    """A destructive action: GET asks for confirmation, POST does it and goes back."""
    if request.method == "POST":
        act()
        messages.success(request, done_message)
        return redirect(done_url)
    return render(request, "confirm.html", page)
