"""API keys in the portal: create (shown once), list, revoke with confirmation."""

from __future__ import annotations

import re

from django.urls import reverse

from accounts.keys import key_create
from accounts.models import ApiKey, AuditEvent
from tests.conftest import Persona
from tests.support.portal import logged_in

RAW_KEY = re.compile(r"ev_live_[A-Za-z0-9]{32}")


def create_key(persona: Persona, name: str = "Production") -> tuple[ApiKey, str]:
    response = logged_in(persona).post(reverse("keys"), {"name": name})
    assert response.status_code == 200
    raw = RAW_KEY.search(response.content.decode())
    assert raw is not None
    return persona.account.api_keys.get(name=name), raw.group()


def test_new_key_is_shown_in_full_once(owner: Persona) -> None:
    key, raw = create_key(owner)
    listing = logged_in(owner).get(reverse("keys")).content.decode()
    assert raw.startswith(key.prefix)
    assert raw not in listing
    assert key.prefix in listing


def test_new_key_works_on_the_api(owner: Persona) -> None:
    _, raw = create_key(owner)
    owner.api_key = raw
    assert owner.verify("jane@good.com").status_code == 200


def test_key_list_shows_name_status_and_last_use(owner: Persona) -> None:
    owner.verify("jane@good.com")
    page = logged_in(owner).get(reverse("keys")).content.decode()
    assert "Test key" in page
    assert "Active" in page
    assert "Never" not in page


def test_key_needs_a_name(owner: Persona) -> None:
    response = logged_in(owner).post(reverse("keys"), {"name": ""})
    assert "This field is required" in response.content.decode()
    assert owner.account.api_keys.count() == 1


def test_revoke_asks_before_revoking(owner: Persona) -> None:
    key = owner.account.api_keys.get()
    page = logged_in(owner).get(reverse("key-revoke", args=[key.pk]))
    assert "Revoke the key" in page.content.decode()
    assert ApiKey.objects.get(pk=key.pk).is_active


def test_revoked_key_gets_401_on_the_api(owner: Persona) -> None:
    key = owner.account.api_keys.get()
    response = logged_in(owner).post(reverse("key-revoke", args=[key.pk]))
    assert response["Location"] == reverse("keys")
    api = owner.verify("jane@good.com")
    assert api.status_code == 401
    assert api.json()["error"]["code"] == "invalid_api_key"


def test_revoking_one_key_leaves_the_others_working(owner: Persona) -> None:
    other, raw = create_key(owner, "Second")
    logged_in(owner).post(reverse("key-revoke", args=[owner.account.api_keys.get(name="Test key").pk]))
    owner.api_key = raw
    assert owner.verify("jane@good.com").status_code == 200


def test_a_key_is_created_with_a_scope_an_expiry_and_an_allow_list(owner: Persona) -> None:
    form = {"name": "CRM", "scope": "verify", "expires_on": "2099-01-31", "allowed_ips": "10.0.0.7\n203.0.113.9/24"}
    page = logged_in(owner).post(reverse("keys"), form).content.decode()
    key = owner.account.api_keys.get(name="CRM")
    assert (key.scope, key.expires_at.isoformat()) == ("verify", "2099-02-01T00:00:00+00:00")
    assert key.allowed_ips == "10.0.0.7/32\n203.0.113.0/24"
    assert key.created_by == owner.account.owner
    assert "203.0.113.0/24" in page and "by " + owner.account.email in page


def test_a_key_with_a_bad_network_or_a_past_day_is_not_created(owner: Persona) -> None:
    bad_ip = logged_in(owner).post(reverse("keys"), {"name": "CRM", "allowed_ips": "10.0.0.300"}).content.decode()
    past = logged_in(owner).post(reverse("keys"), {"name": "CRM", "expires_on": "2001-01-01"}).content.decode()
    assert "is not an IP address or a network" in bad_ip
    assert "Choose today or a later day." in past
    assert owner.account.api_keys.count() == 1


def test_a_keys_caps_and_origins_are_changed_on_the_keys_page_and_audited(owner: Persona) -> None:
    key = key_create(
        account=owner.account, created_by=owner.account.owner, kind="publishable",
        allowed_origins=["https://shop.example.com"],
    )[0]  # fmt: skip
    browser = logged_in(owner)
    page = browser.get(f"/keys/{key.pk}/edit")
    assert page.status_code == 200 and b"https://shop.example.com" in page.content
    form = {"name": "Shop", "daily_cap": "50", "monthly_cap": "", "allowed_origins": "https://*.example.com"}
    assert browser.post(f"/keys/{key.pk}/edit", form).status_code == 302
    key.refresh_from_db()
    assert (key.daily_cap, key.monthly_cap, key.origin_list()) == (50, None, ["https://*.example.com"])
    assert owner.account.audit_events.filter(action=AuditEvent.Action.KEY_CHANGED).exists()
    refused = browser.post(f"/keys/{key.pk}/edit", {**form, "allowed_origins": "ftp://x"})
    assert refused.status_code == 200 and "is not an origin" in refused.content.decode()


def test_another_accounts_key_cannot_be_changed(owner: Persona, outsider: Persona) -> None:
    theirs = outsider.account.api_keys.get()
    assert logged_in(owner).post(f"/keys/{theirs.pk}/edit", {"name": "Mine"}).status_code == 404
    theirs.refresh_from_db()
    assert theirs.name != "Mine"


def test_the_keys_page_lists_the_sandbox_addresses_and_their_answers(owner: Persona) -> None:
    page = logged_in(owner).get(reverse("keys")).content.decode()
    assert "<code>invalid@sandbox.example</code>: invalid, mailbox_not_found" in page
    assert "<code>valid@sandbox.example</code>: valid" in page and "the README lists" not in page


def test_the_key_form_asks_secret_or_publishable_right_after_the_name(owner: Persona) -> None:
    page = logged_in(owner).get(reverse("keys")).content.decode()
    labels = re.findall(r'<label for="id_(\w+)"[^>]*>([^<]+)</label>', page)
    assert labels[:3] == [("name", "Key name:"), ("kind", "Secret or publishable:"), ("mode", "Live or test:")]
