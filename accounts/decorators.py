"""What every portal page shares: a logged-in user, the account they act for, no caching."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Concatenate

from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.views.decorators.cache import never_cache
from django_htmx.http import HttpResponseClientRedirect

from accounts.models import Account, account_for

type AccountView[**P] = Callable[Concatenate[HttpRequest, Account, P], HttpResponseBase]
type PortalView[**P] = Callable[Concatenate[HttpRequest, P], HttpResponseBase]


def account_required[**P](view: AccountView[P]) -> PortalView[P]:
    """Log-in required; the view gets the caller's own account, which scopes every lookup.

    A user without an account (staff who only use the admin) gets 404, never someone else's data.
    """

    @wraps(view)
    def wrapper(request: HttpRequest, *args: P.args, **kwargs: P.kwargs) -> HttpResponseBase:
        if not request.user.is_authenticated:
            return _to_login(request)
        account = account_for(request.user)
        if account is None:
            raise Http404("No account.")
        return view(request, account, *args, **kwargs)

    return never_cache(wrapper)


def _to_login(request: HttpRequest) -> HttpResponse:
    response = redirect_to_login(request.get_full_path())
    if getattr(request, "htmx", False):
        # An htmx request would swap the log-in page into the panel: send the whole page there instead.
        return HttpResponseClientRedirect(response["Location"])
    return response
