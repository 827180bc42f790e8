"""docs/keys.md: the keys API (`/v1/keys`) for an owner's or admin's full-scope live key."""

from __future__ import annotations

import json
from typing import Any

import pytest

from accounts.models import ApiKey, AuditEvent, KeyMode, Membership, Role
from tests.conftest import Persona, sandboxed
from tests.factories import UserFactory


def patch(persona: Persona, path: str, body: Any) -> Any:
    return persona.client.patch(path, data=json.dumps(body), content_type="application/json", headers=persona.auth({}))


def delete(persona: Persona, path: str) -> Any:
    return persona.client.delete(path, headers=persona.auth({}))


def error(response: Any) -> tuple[int, str, str | None]:
    body = response.json()["error"]
    return response.status_code, body["code"], body["param"]


def test_a_new_secret_key_is_shown_once_and_listed_without_it(owner: Persona) -> None:
    made = owner.post_json("/v1/keys", {"name": "Billing server", "daily_cap": 500})
    assert made.status_code == 201
    body = made.json()
    assert body["key"].startswith("ev_live_") and body["kind"] == "secret" and body["scope"] == "full"
    assert (body["daily_cap"], body["monthly_cap"], body["spent_today"]) == (500, None, 0)
    listed = owner.get("/v1/keys").json()["data"]
    assert [key["name"] for key in listed] == ["Test key", "Billing server"]
    assert all("key" not in key for key in listed)
    assert set(listed[1]) == set(body) - {"key"}


def test_a_publishable_key_is_verify_only_with_origins_and_a_daily_cap_of_1000(owner: Persona) -> None:
    made = owner.post_json(
        "/v1/keys", {"kind": "publishable", "name": "Shop", "allowed_origins": ["https://Shop.Example.com:443"]}
    )
    body = made.json()
    assert made.status_code == 201
    assert body["key"].startswith("ev_pub_live_") and len(body["key"]) == 12 + 32
    assert body["prefix"] == body["key"][:16]
    assert (body["scope"], body["daily_cap"], body["allowed_origins"]) == ("verify", 1000, ["https://shop.example.com"])
    test_key = owner.post_json(
        "/v1/keys", {"kind": "publishable", "mode": "test", "allowed_origins": ["https://*.example.com"]}
    )
    assert test_key.json()["key"].startswith("ev_pub_test_")


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"kind": "publishable"}, "allowed_origins"),
        ({"kind": "publishable", "allowed_origins": ["https://a.com/path"]}, "allowed_origins"),
        ({"kind": "publishable", "allowed_origins": ["https://*.com"]}, "allowed_origins"),
        ({"kind": "publishable", "allowed_origins": ["https://a.com"], "scope": "full"}, "scope"),
        ({"allowed_origins": ["https://a.com"]}, "allowed_origins"),
        ({"daily_cap": -1}, "daily_cap"),
        ({"monthly_cap": "ten"}, "monthly_cap"),
        ({"kind": "magic"}, "kind"),
        ({"mode": "prod"}, "mode"),
        ({"name": ""}, "name"),
        ({"expires_at": "tomorrow"}, "expires_at"),
        # A key born expired is a mistake; and a year before 1000 once came back unpadded, off RFC 3339.
        ({"expires_at": "0474-03-12T15:28:29Z"}, "expires_at"),
        ({"expires_at": "2020-01-01T00:00:00Z"}, "expires_at"),
    ],
)
def test_a_bad_key_request_is_400_and_makes_nothing(owner: Persona, body: dict[str, Any], param: str) -> None:
    response = owner.post_json("/v1/keys", body)
    assert error(response) == (400, "invalid_request", param)
    assert owner.account.api_keys.count() == 1


def test_changing_caps_and_name_is_answered_and_audited(owner: Persona) -> None:
    key_id = owner.post_json("/v1/keys", {"name": "Old"}).json()["id"]
    response = patch(owner, f"/v1/keys/{key_id}", {"name": "New", "monthly_cap": 20000, "daily_cap": None})
    assert response.status_code == 200
    assert (response.json()["name"], response.json()["monthly_cap"]) == ("New", 20000)
    event = owner.account.audit_events.filter(action=AuditEvent.Action.KEY_CHANGED).get()
    assert "monthly_cap 20000" in event.detail and event.key_prefix == owner.api_key[:12]


def test_a_key_change_of_an_unknown_field_is_400_and_changes_nothing(owner: Persona) -> None:
    key_id = owner.post_json("/v1/keys", {"name": "Old"}).json()["id"]
    response = patch(owner, f"/v1/keys/{key_id}", {"name": "New", "scope": "read"})
    assert error(response) == (400, "invalid_request", "scope")
    assert ApiKey.objects.get(pk=key_id).name == "Old"


def test_a_revoked_key_is_refused_at_once_and_gone_from_the_list(owner: Persona) -> None:
    made = owner.post_json("/v1/keys", {"name": "Temp"}).json()
    assert delete(owner, f"/v1/keys/{made['id']}").status_code == 204
    response = owner.client.get("/v1/account", headers={"Authorization": f"Bearer {made['key']}"})
    assert response.status_code == 401
    assert [key["id"] for key in owner.get("/v1/keys").json()["data"]] != [made["id"]]
    assert owner.account.audit_events.filter(action=AuditEvent.Action.KEY_REVOKED).exists()
    assert delete(owner, f"/v1/keys/{made['id']}").status_code == 404


def test_another_accounts_key_is_404_and_untouched(owner: Persona, outsider: Persona) -> None:
    theirs = outsider.account.api_keys.get()
    assert error(patch(owner, f"/v1/keys/{theirs.pk}", {"name": "Mine"}))[:2] == (404, "not_found")
    assert error(delete(owner, f"/v1/keys/{theirs.pk}"))[:2] == (404, "not_found")
    theirs.refresh_from_db()
    assert theirs.is_active and theirs.name != "Mine"


def test_a_developers_key_cannot_manage_keys(owner: Persona) -> None:
    developer = UserFactory()
    Membership.objects.create(account=owner.account, user=developer, role=Role.DEVELOPER)
    owner.api_key = ApiKey.issue(account=owner.account, created_by=developer)[1]
    assert error(owner.get("/v1/keys"))[:2] == (403, "key_not_permitted")
    assert error(owner.post_json("/v1/keys", {}))[:2] == (403, "key_not_permitted")


def test_an_admins_key_manages_keys(owner: Persona) -> None:
    admin = UserFactory()
    Membership.objects.create(account=owner.account, user=admin, role=Role.ADMIN)
    owner.api_key = ApiKey.issue(account=owner.account, created_by=admin)[1]
    assert owner.post_json("/v1/keys", {"kind": "publishable", "allowed_origins": ["https://a.com"]}).status_code == 201


@pytest.mark.parametrize("limits", [{"scope": ApiKey.Scope.VERIFY}, {"scope": ApiKey.Scope.READ}])
def test_a_narrow_key_cannot_manage_keys(owner: Persona, limits: dict[str, str]) -> None:
    owner.api_key = ApiKey.issue(account=owner.account, **limits)[1]
    assert error(owner.get("/v1/keys"))[:2] == (403, "key_not_permitted")


def test_a_test_key_cannot_manage_keys(owner: Persona) -> None:
    response = sandboxed(owner).post_json("/v1/keys", {"mode": KeyMode.LIVE})
    assert error(response)[:2] == (403, "key_not_permitted")
    assert owner.account.api_keys.count() == 2


def test_a_publishable_keys_origins_are_replaced_and_take_effect_at_once(owner: Persona) -> None:
    made = owner.post_json("/v1/keys", {"kind": "publishable", "allowed_origins": ["https://old.example.com"]}).json()
    response = patch(owner, f"/v1/keys/{made['id']}", {"allowed_origins": ["https://new.example.com"]})
    assert response.json()["allowed_origins"] == ["https://new.example.com"]
    page = {"Authorization": f"Bearer {made['key']}"}
    verify = {"path": "/v1/verify", "data": {"email": "a@good.com"}, "content_type": "application/json"}
    assert owner.client.post(**verify, headers={**page, "Origin": "https://old.example.com"}).status_code == 403
    assert owner.client.post(**verify, headers={**page, "Origin": "https://new.example.com"}).status_code == 200


@pytest.mark.parametrize(
    ("kind", "origins"), [("publishable", []), ("publishable", ["not an origin"]), ("secret", ["https://a.com"])]
)
def test_origins_a_key_cannot_have_are_400_and_change_nothing(owner: Persona, kind: str, origins: list[str]) -> None:
    body = {"kind": kind, "allowed_origins": ["https://a.com"]} if kind == "publishable" else {}
    made = owner.post_json("/v1/keys", body).json()
    response = patch(owner, f"/v1/keys/{made['id']}", {"allowed_origins": origins})
    assert error(response) == (400, "invalid_request", "allowed_origins")
    assert ApiKey.objects.get(pk=made["id"]).allowed_origins == ("https://a.com" if kind == "publishable" else "")


def test_a_retried_key_creation_with_an_idempotency_key_makes_one_key_and_replays_it_without_the_secret(
    owner: Persona,
) -> None:
    first = owner.post_json("/v1/keys", {"name": "CRM", "daily_cap": 50}, **{"Idempotency-Key": "make-crm"})
    again = owner.post_json("/v1/keys", {"name": "CRM", "daily_cap": 50}, **{"Idempotency-Key": "make-crm"})
    assert (first.status_code, again.status_code) == (201, 201)
    assert first.json()["key"].startswith("ev_live_") and "key" not in again.json()
    assert again["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first
    assert again.json() == {name: value for name, value in first.json().items() if name != "key"}
    assert owner.account.api_keys.filter(name="CRM").count() == 1
    assert owner.account.audit_events.filter(action=AuditEvent.Action.KEY_CREATED).count() == 1


def test_a_key_creation_idempotency_key_reused_with_another_body_is_422(owner: Persona) -> None:
    owner.post_json("/v1/keys", {"name": "CRM"}, **{"Idempotency-Key": "k"})
    response = owner.post_json("/v1/keys", {"name": "Other"}, **{"Idempotency-Key": "k"})
    assert error(response) == (422, "idempotency_key_reused", "Idempotency-Key")
    assert not owner.account.api_keys.filter(name="Other").exists()


def test_a_refused_key_creation_is_not_kept_for_replay(owner: Persona) -> None:
    refused = owner.post_json("/v1/keys", {"kind": "publishable"}, **{"Idempotency-Key": "k"})
    assert error(refused)[:2] == (400, "invalid_request")
    made = owner.post_json(
        "/v1/keys", {"kind": "publishable", "allowed_origins": ["https://a.com"]}, **{"Idempotency-Key": "k"}
    )
    assert made.status_code == 201  # the refusal let its key go: the corrected request runs
