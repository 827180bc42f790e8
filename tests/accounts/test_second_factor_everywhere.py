"""Two-factor sign-in holds at every door: a session that passed the password but not the code
(the admin's login, a password reset, a session older than the device, a forced login) opens
no portal page and no admin page. Walked from the URL configuration, as the permission table is."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib import admin
from django.core import mail
from django.test import Client
from django.urls import URLPattern, reverse

from accounts.models import Membership, Role
from tests.accounts.conftest import PASSWORD, enrol
from tests.conftest import Persona
from tests.support.portal import logged_in
from tests.support.routes import ROUTES, sample_arguments
from tests.support.totp import totp_code

# Key-, signature- or token-authenticated, never by session: not pages.
NOT_PAGES = ("/v1/", "/webhooks/", "/static/", "/widget/", "/healthz", "/readyz", "/metrics")
OPEN_WHILE_PENDING = {"login-code", "logout"}
PAGES = [
    (name, params)
    for name, _, params in ROUTES
    if name not in OPEN_WHILE_PENDING and not name.startswith("api-") and name != "None"
]
ADMIN_PAGES = sorted(
    f"/admin/{entry.pattern}"
    for entry in admin.site.get_urls()
    if isinstance(entry, URLPattern)
    and not entry.pattern.converters
    and entry.name not in ("login", "logout")  # the doors in and out
)


@pytest.fixture
def staff_owner(owner: Persona, settings: Any) -> tuple[Any, str]:
    """The account's owner, also staff, with two-factor on; the admin requires it too."""
    settings.ADMIN_REQUIRE_2FA = True
    user = owner.account.owner
    user.is_staff = user.is_superuser = True
    user.save(update_fields=["is_staff", "is_superuser"])
    secret, _ = enrol(logged_in(owner))
    return user, secret


def half_signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)  # the password (or any door but the code page) and nothing more
    return client


def is_sent_to_the_code(response: Any) -> bool:
    return response.status_code == 302 and response["Location"] == reverse("login-code")


@pytest.mark.parametrize(("name", "params"), PAGES, ids=[name for name, _ in PAGES])
def test_no_portal_page_opens_to_a_half_signed_in_session(
    staff_owner: tuple[Any, str], owner: Persona, name: str, params: list[str]
) -> None:
    tokens = {param: "x" for param in params if param in ("token", "uidb64")}  # a link's own secret
    url = reverse(name, kwargs=sample_arguments(owner, [p for p in params if p not in tokens]) | tokens)
    if url.startswith(NOT_PAGES):
        pytest.skip("not a page: authenticated by key or signature")
    assert is_sent_to_the_code(half_signed_in(staff_owner[0]).get(url))
    assert is_sent_to_the_code(half_signed_in(staff_owner[0]).post(url))


@pytest.mark.parametrize("path", ADMIN_PAGES)
def test_no_admin_page_opens_to_a_half_signed_in_session(staff_owner: tuple[Any, str], path: str) -> None:
    assert is_sent_to_the_code(half_signed_in(staff_owner[0]).get(path))


@pytest.mark.parametrize("page", ["/dashboard", "/keys", "/admin/", "/billing", "/settings/security"])
def test_the_admins_login_with_the_password_alone_opens_nothing(staff_owner: tuple[Any, str], page: str) -> None:
    user, _ = staff_owner
    client = Client()
    client.post("/admin/login/", {"username": user.username, "password": PASSWORD})
    assert is_sent_to_the_code(client.get(page))
    assert client.get(page).status_code == 302  # and still not, asked again


def test_the_code_finishes_the_sign_in_and_opens_the_page_asked_for(staff_owner: tuple[Any, str]) -> None:
    user, secret = staff_owner
    client = Client()
    client.post("/admin/login/", {"username": user.username, "password": PASSWORD})
    client.get("/keys")
    response = client.post(reverse("login-code"), {"code": totp_code(secret, seconds_ahead=30)})
    assert response["Location"] == "/keys"
    assert client.get("/keys").status_code == 200 and client.get("/admin/").status_code == 200


def test_a_password_reset_does_not_skip_the_code(staff_owner: tuple[Any, str]) -> None:
    user, _ = staff_owner
    client = Client()
    client.post(reverse("password_reset"), {"email": user.email})
    link = re.search(r"https?://\S+/password/reset/\S+", mail.outbox[-1].body)
    assert link is not None
    form = client.get(link.group(0).split("testserver", 1)[-1], follow=True)
    new = "another horse battery staple"
    client.post(form.redirect_chain[-1][0], {"new_password1": new, "new_password2": new})
    response = client.post(reverse("login"), {"username": user.email, "password": new})
    assert response["Location"] == reverse("login-code")
    assert client.get("/dashboard")["Location"].startswith(reverse("login"))  # pending: not signed in


def test_switching_accounts_does_not_skip_the_code(staff_owner: tuple[Any, str], outsider: Persona) -> None:
    user, _ = staff_owner
    Membership.objects.create(account=outsider.account, user=user, role=Role.ADMIN)
    client = half_signed_in(user)
    assert is_sent_to_the_code(client.post(reverse("account-switch"), {"account": outsider.account.pk}))


def test_a_user_without_a_device_is_not_asked(owner: Persona) -> None:
    assert logged_in(owner).get("/dashboard").status_code == 200


def test_the_api_is_not_a_door_for_sessions(staff_owner: tuple[Any, str], owner: Persona) -> None:
    response = half_signed_in(staff_owner[0]).get("/v1/account", headers=owner.auth({}))
    assert response.status_code == 200
