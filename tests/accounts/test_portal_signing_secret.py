"""The callback signing secret: shown to its owner, rotated with a confirmation and a 24 h overlap."""

from __future__ import annotations

from django.urls import reverse

from accounts.models import Account
from tests.conftest import Persona
from tests.support.portal import logged_in


def fresh(persona: Persona) -> Account:
    return Account.objects.get(pk=persona.account.pk)


def test_page_shows_the_secret_and_how_to_check_a_signature(owner: Persona) -> None:
    page = logged_in(owner).get(reverse("signing-secret")).content.decode()
    assert owner.account.signing_secret in page
    assert "X-Service-Signature" in page
    assert "hmac.compare_digest" in page


def test_rotate_asks_first(owner: Persona) -> None:
    page = logged_in(owner).get(reverse("signing-secret-rotate")).content.decode()
    assert "Rotate the signing secret?" in page
    assert fresh(owner).signing_secret == owner.account.signing_secret


def test_rotate_changes_the_secret_and_keeps_the_old_one_active(owner: Persona) -> None:
    old = owner.account.signing_secret
    response = logged_in(owner).post(reverse("signing-secret-rotate"))
    account = fresh(owner)
    assert response["Location"] == reverse("signing-secret")
    assert account.signing_secret != old
    assert account.signing_secret.startswith("whsec_")
    assert account.active_signing_secrets() == [account.signing_secret, old]


def test_page_after_rotation_says_until_when_both_signatures_are_sent(owner: Persona) -> None:
    client = logged_in(owner)
    client.post(reverse("signing-secret-rotate"))
    page = client.get(reverse("signing-secret")).content.decode()
    assert fresh(owner).signing_secret in page
    assert "callbacks also carry a signature made with the previous secret" in page


def test_outsider_rotating_changes_only_their_own_secret(owner: Persona, outsider: Persona) -> None:
    logged_in(outsider).post(reverse("signing-secret-rotate"))
    assert fresh(owner).signing_secret == owner.account.signing_secret
    assert fresh(outsider).signing_secret != outsider.account.signing_secret


def test_a_callback_url_that_is_not_public_is_refused_on_its_field(owner: Persona) -> None:
    response = logged_in(owner).post(reverse("signing-secret"), {"callback_url": "http://127.0.0.1/hook"})
    assert response.status_code == 200
    assert "private, loopback" in response.content.decode()
    assert fresh(owner).callback_url == ""


def test_a_blank_callback_url_removes_it(owner: Persona) -> None:
    Account.objects.filter(pk=owner.account.pk).update(callback_url="https://93.184.215.14/hook")
    logged_in(owner).post(reverse("signing-secret"), {"callback_url": ""})
    assert fresh(owner).callback_url == ""
