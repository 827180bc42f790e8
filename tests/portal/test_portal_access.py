"""Who may see which portal page: anonymous visitors, the owner, another customer, staff."""

from __future__ import annotations

import pytest
from django.contrib.staticfiles import finders
from django.test import Client
from django.urls import reverse

from accounts.models import ApiKey
from tests.conftest import Persona
from tests.support.portal import logged_in

PRIVATE_PAGES = ["dashboard", "verify", "keys", "signing-secret", "signing-secret-rotate", "billing", "password_change"]
PUBLIC_PAGES = ["landing", "signup", "login", "password_reset"]


@pytest.mark.parametrize("name", PRIVATE_PAGES)
def test_anonymous_visitor_is_sent_to_log_in(db: None, name: str) -> None:
    url = reverse(name)
    response = Client().get(url)
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('login')}?next={url}"


def test_anonymous_visitor_cannot_reach_a_key_revoke_page(owner: Persona) -> None:
    key = owner.account.api_keys.get()
    response = Client().post(reverse("key-revoke", args=[key.pk]))
    assert response.status_code == 302
    assert ApiKey.objects.get(pk=key.pk).is_active


@pytest.mark.parametrize("name", PUBLIC_PAGES)
def test_public_pages_open_without_log_in(db: None, name: str) -> None:
    assert Client().get(reverse(name)).status_code == 200


def test_the_icon_browsers_ask_every_page_for_is_there() -> None:
    response = Client().get("/favicon.ico")
    assert (response.status_code, response["Location"]) == (301, "/static/favicon.svg")
    assert finders.find("favicon.svg")


@pytest.mark.parametrize("name", PRIVATE_PAGES)
def test_owner_opens_every_page(owner: Persona, name: str) -> None:
    assert logged_in(owner).get(reverse(name)).status_code == 200


@pytest.mark.parametrize("name", ["dashboard", "keys", "signing-secret", "billing"])
def test_private_pages_are_not_cached(owner: Persona, name: str) -> None:
    assert "no-store" in logged_in(owner).get(reverse(name))["Cache-Control"]


def test_outsider_sees_none_of_the_owners_data(owner: Persona, outsider: Persona) -> None:
    client = logged_in(outsider)
    pages = [client.get(reverse(name)).content.decode() for name in ("keys", "signing-secret", "dashboard")]
    assert not any(owner.account.signing_secret in page for page in pages)
    assert not any(owner.account.api_keys.get().prefix in page for page in pages)


def test_staff_without_an_account_gets_404_not_someone_elses_dashboard(staff: object, owner: Persona) -> None:
    client = Client()
    client.force_login(staff)  # type: ignore[arg-type]
    assert client.get(reverse("dashboard")).status_code == 404


def test_log_out_needs_a_post(owner: Persona) -> None:
    client = logged_in(owner)
    assert client.get(reverse("logout")).status_code == 405
    assert client.post(reverse("logout")).status_code == 302
    assert client.get(reverse("dashboard")).status_code == 302


def test_forms_refuse_a_post_without_csrf_token(owner: Persona) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner.account.owner)
    assert client.post(reverse("keys"), {"name": "x"}).status_code == 403


def test_htmx_request_after_the_session_ended_reloads_the_log_in_page(db: None) -> None:
    response = Client().post(reverse("verify"), {"email": "jane@good.com"}, headers={"HX-Request": "true"})
    assert response["HX-Redirect"] == f"{reverse('login')}?next={reverse('verify')}"


def test_the_dashboard_after_sign_up_says_we_sent_a_link_once(db: None) -> None:

    client = Client()
    form = {"email": "new@company.example.com", "password": "a-long-unusual-passphrase"}
    page = client.post(reverse("signup"), form, follow=True).content.decode()
    assert page.count("we sent a link") + page.count("We sent a link") == 1
