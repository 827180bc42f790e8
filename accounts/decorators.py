"""The portal's door: a logged-in user, the account they act for, the permission table, no caching."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Concatenate

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import redirect
from django.utils.functional import SimpleLazyObject
from django.views.decorators.cache import never_cache
from django_htmx.http import HttpResponseClientRedirect

from accounts.models import Account, Membership, membership_for, memberships_of
from accounts.permissions import Action, may, role_may
from accounts.two_factor import has_two_factor

type AccountView[**P] = Callable[Concatenate[HttpRequest, Account, P], HttpResponseBase]
type PortalView[**P] = Callable[Concatenate[HttpRequest, P], HttpResponseBase]

# Where the header's account switch keeps the chosen account's public id.
ACCOUNT_SESSION_KEY = "account"


def account_required[**P](action: Action) -> Callable[[AccountView[P]], PortalView[P]]:
    """Log-in required, and a role in the account acted for that may do `action`.

    The view gets that account, which scopes every lookup; `request.membership` says who acts how.
    A user without an account (staff who only use the admin) gets 404, never someone else's data;
    a member whose role may not do `action` gets 403; in an account that requires two-factor
    sign-in, a member without it is sent to /settings/security.
    """

    def decorate(view: AccountView[P]) -> PortalView[P]:
        @wraps(view)
        def wrapper(request: HttpRequest, *args: P.args, **kwargs: P.kwargs) -> HttpResponseBase:
            if not request.user.is_authenticated:
                return _to_login(request)
            membership = membership_for(request.user, request.session.get(ACCOUNT_SESSION_KEY))
            if membership is None:
                raise Http404("No account.")
            _for_the_header(request, membership)  # before a refusal too: the 403 page's header shows the same links
            if not role_may(membership.role, action):
                raise PermissionDenied(f"A {membership.role} may not do this.")
            if membership.account.require_two_factor and not has_two_factor(request.user):
                messages.warning(request, "This account requires two-factor sign-in: turn it on to continue.")
                return redirect("security")
            return view(request, membership.account, *args, **kwargs)

        wrapper.permission = action  # type: ignore[attr-defined]  # read by tests/accounts/test_permissions.py
        return never_cache(wrapper)

    return decorate


def _for_the_header(request: HttpRequest, membership: Membership) -> None:
    """What base.html shows: the links the role may follow, and the accounts it may switch to."""
    request.membership = membership  # type: ignore[attr-defined]
    request.can = may(membership.role)  # type: ignore[attr-defined]
    request.switchable = SimpleLazyObject(  # type: ignore[attr-defined]
        lambda: list(memberships_of(membership.user_id).select_related("account__owner"))
    )


def _to_login(request: HttpRequest) -> HttpResponse:
    response = redirect_to_login(request.get_full_path())
    if getattr(request, "htmx", False):
        # An htmx request would swap the log-in page into the panel: send the whole page there instead.
        return HttpResponseClientRedirect(response["Location"])
    return response
