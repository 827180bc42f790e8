"""docs/keys.md, "Keys never widen themselves": every kind of limited key × every keys operation, and
the portal's key edit held to the keys API's rule."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from accounts.models import ApiKey, KeyMode, Membership, Role
from tests.conftest import Persona
from tests.factories import UserFactory

IN_AN_HOUR = timezone.now() + timedelta(hours=1)
# Each kind of limited key: what it is issued with, and what a key it makes may have at most.
LIMITED = {
    "daily cap": {"daily_cap": 10},
    "monthly cap": {"monthly_cap": 100},
    "expiry": {"expires_at": IN_AN_HOUR},
    "ip list": {"allowed_ips": "127.0.0.0/8"},
    "verify scope": {"scope": ApiKey.Scope.VERIFY},
    "read scope": {"scope": ApiKey.Scope.READ},
    "test key": {"key_mode": KeyMode.TEST},
    "publishable key": {
        "kind": ApiKey.Kind.PUBLISHABLE,
        "scope": ApiKey.Scope.VERIFY,
        "allowed_origins": "https://a.com",
    },
}
# The kinds that may use the keys API at all (a full-scope live secret key of an owner): held within their limits.
MANAGING = {"daily cap", "monthly cap", "expiry", "ip list"}


def as_body(limits: dict[str, Any]) -> dict[str, Any]:
    """A POST /v1/keys body giving the new key exactly the caller's limits."""
    body = {name: value for name, value in limits.items() if name in ("daily_cap", "monthly_cap", "scope")}
    if "expires_at" in limits:
        body["expires_at"] = limits["expires_at"].strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if "allowed_ips" in limits:
        body["allowed_ips"] = [limits["allowed_ips"]]
    return body


def call(persona: Persona, method: str, path: str, body: Any = None) -> Any:
    data = json.dumps(body) if body is not None else None
    send = getattr(persona.client, method)
    return send(path, data=data, content_type="application/json", headers=persona.auth({}))


def operations(mine: ApiKey, other: ApiKey, limits: dict[str, Any]) -> dict[str, tuple[str, str, Any]]:
    return {
        "list": ("get", "/v1/keys", None),
        "create plain": ("post", "/v1/keys", {"name": "x"}),
        "create within": ("post", "/v1/keys", {"name": "x", **as_body(limits)}),
        "update own limits": ("patch", f"/v1/keys/{mine.pk}", {"daily_cap": 1000, "monthly_cap": None}),
        "update own name": ("patch", f"/v1/keys/{mine.pk}", {"name": "renamed"}),
        "uncap another": ("patch", f"/v1/keys/{other.pk}", {"daily_cap": None, "monthly_cap": None}),
        "revoke another": ("delete", f"/v1/keys/{other.pk}", None),
    }


EXPECTED_OF_MANAGING = {
    "list": 200,
    "create plain": 403,
    "create within": 201,
    "update own limits": 403,
    "update own name": 200,
    "uncap another": 403,
    "revoke another": 204,
}


@pytest.mark.parametrize("operation", list(EXPECTED_OF_MANAGING))
@pytest.mark.parametrize("kind", list(LIMITED))
def test_a_limited_key_never_widens_itself_or_a_key_it_makes(owner: Persona, kind: str, operation: str) -> None:
    limits = LIMITED[kind]
    mine, owner.api_key = ApiKey.issue(account=owner.account, created_by=owner.account.owner, name="me", **limits)
    other = ApiKey.issue(account=owner.account, created_by=owner.account.owner, name="other", daily_cap=5)[0]
    keys_before = owner.account.api_keys.count()
    method, path, body = operations(mine, other, limits)[operation]
    response = call(owner, method, path, body)
    expected = EXPECTED_OF_MANAGING[operation] if kind in MANAGING else 403
    assert response.status_code == expected, response.content
    if expected == 403:
        assert response.json()["error"]["code"] == "key_not_permitted"
        mine.refresh_from_db()
        other.refresh_from_db()
        assert [getattr(mine, name) for name in ("daily_cap", "monthly_cap", "expires_at", "name")] == [
            limits.get("daily_cap"), limits.get("monthly_cap"), limits.get("expires_at"), "me"
        ]  # fmt: skip
        assert (other.daily_cap, other.is_active, owner.account.api_keys.count()) == (5, True, keys_before)


@pytest.mark.parametrize(
    ("limits", "body", "param"),
    [
        ({"daily_cap": 10}, {"daily_cap": 11}, "daily_cap"),
        ({"monthly_cap": 100}, {"monthly_cap": None}, "monthly_cap"),
        ({"expires_at": IN_AN_HOUR}, {"expires_at": "2099-01-01T00:00:00Z"}, "expires_at"),
        ({"allowed_ips": "127.0.0.0/8"}, {"allowed_ips": ["10.0.0.0/8"]}, "allowed_ips"),
        ({"allowed_ips": "127.0.0.0/8"}, {"allowed_ips": ["127.0.0.0/7"]}, "allowed_ips"),
    ],
)
def test_a_key_made_by_a_limited_key_is_refused_when_looser_and_names_the_field(
    owner: Persona, limits: dict[str, Any], body: dict[str, Any], param: str
) -> None:
    owner.api_key = ApiKey.issue(account=owner.account, created_by=owner.account.owner, **limits)[1]
    response = owner.post_json("/v1/keys", {**as_body(limits), **body})
    assert (response.status_code, response.json()["error"]["code"]) == (403, "key_not_permitted")
    assert response.json()["error"]["param"] == param


def test_a_limited_key_makes_a_narrower_key(owner: Persona) -> None:
    owner.api_key = ApiKey.issue(
        account=owner.account, created_by=owner.account.owner, daily_cap=10, allowed_ips="127.0.0.0/8"
    )[1]
    made = owner.post_json("/v1/keys", {"daily_cap": 3, "allowed_ips": ["127.0.0.1"], "scope": "verify"})
    assert made.status_code == 201
    key = ApiKey.objects.get(pk=made.json()["id"])
    assert (key.daily_cap, key.allowed_ips, key.scope) == (3, "127.0.0.1/32", "verify")


def test_an_unlimited_key_still_lifts_another_keys_caps(owner: Persona) -> None:
    other = ApiKey.issue(account=owner.account, created_by=owner.account.owner, daily_cap=5)[0]
    assert call(owner, "patch", f"/v1/keys/{other.pk}", {"daily_cap": None}).json()["daily_cap"] is None


# --- the portal: who may change another member's key's caps is who may in the keys API ---------------


def member(persona: Persona, role: Role) -> Client:
    user = UserFactory()
    Membership.objects.create(account=persona.account, user=user, role=role)
    browser = Client()
    browser.force_login(user)
    return browser


def edit(browser: Client, key: ApiKey, **form: str) -> Any:
    return browser.post(f"/keys/{key.pk}/edit", {"name": key.name, "daily_cap": "", "monthly_cap": "", **form})


def test_a_developer_cannot_remove_the_owners_key_caps_in_the_portal(owner: Persona) -> None:
    key = ApiKey.issue(account=owner.account, created_by=owner.account.owner, name="Prod", daily_cap=10)[0]
    refused = edit(member(owner, Role.DEVELOPER), key)
    assert refused.status_code == 200 and "Only an owner or admin" in refused.content.decode()
    key.refresh_from_db()
    assert key.daily_cap == 10


def test_a_developer_still_renames_the_owners_key_and_caps_their_own(owner: Persona) -> None:
    key = ApiKey.issue(account=owner.account, created_by=owner.account.owner, name="Prod", daily_cap=10)[0]
    browser = member(owner, Role.DEVELOPER)
    assert edit(browser, key, name="Production", daily_cap="10").status_code == 302
    developer = Membership.objects.get(account=owner.account, role=Role.DEVELOPER).user
    theirs = ApiKey.issue(account=owner.account, created_by=developer, name="Mine", daily_cap=10)[0]
    assert edit(browser, theirs).status_code == 302
    key.refresh_from_db()
    theirs.refresh_from_db()
    assert (key.name, key.daily_cap, theirs.daily_cap) == ("Production", 10, None)


@pytest.mark.parametrize("role", [Role.ADMIN, Role.OWNER])
def test_an_owner_or_admin_changes_a_developers_key_caps_in_the_portal(owner: Persona, role: Role) -> None:
    developer = UserFactory()
    Membership.objects.create(account=owner.account, user=developer, role=Role.DEVELOPER)
    key = ApiKey.issue(account=owner.account, created_by=developer, name="Dev", daily_cap=10)[0]
    browser = member(owner, Role.ADMIN) if role == Role.ADMIN else Client()
    if role == Role.OWNER:
        browser.force_login(owner.account.owner)
    assert edit(browser, key, daily_cap="20").status_code == 302
    key.refresh_from_db()
    assert key.daily_cap == 20
