"""The permission table, walked exhaustively from the URL configuration: every route has a rule,
and every role (portal) and every key scope and creator role (API) gets what the table says."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import ApiKey, Membership, Role
from accounts.permissions import OUTSIDE_ACCOUNTS, SCOPES, Action, role_may
from apikit.views import AccountAPIView
from jobs.models import Job
from tests.conftest import Persona
from tests.factories import UserFactory
from tests.support.routes import PORTAL, ROUTES, sample_arguments

METHODS = ["get", "post", "put", "patch", "delete"]


VIEWS = {name: view for name, view, _ in ROUTES}
API = [
    (name, method, action, params)
    for name, view, params in ROUTES
    if issubclass(getattr(view, "cls", object), AccountAPIView)
    for method, action in view.cls.permission.items()
]


@pytest.mark.parametrize("name", [name for name, _, _ in ROUTES])
def test_every_route_has_a_rule(name: str) -> None:
    view = VIEWS[name]
    rules = [
        hasattr(view, "permission"),  # a portal view: account_required(action)
        issubclass(getattr(view, "cls", object), AccountAPIView),  # an API endpoint: permission per method
        name in OUTSIDE_ACCOUNTS,
    ]
    assert rules.count(True) == 1, f"route {name!r} needs exactly one rule (accounts/permissions.py)"


@pytest.mark.parametrize("name", sorted({name for name, *_ in API}))
def test_every_api_method_has_a_rule(name: str) -> None:
    cls = VIEWS[name].cls
    handlers = {method.upper() for method in METHODS if hasattr(cls, method)}
    assert handlers == set(cls.permission)


def test_read_keys_may_only_get() -> None:
    for _, method, action, _ in API:
        assert method == "GET" or action not in SCOPES[ApiKey.Scope.READ]


def member(persona: Persona, role: Role) -> Any:
    user = UserFactory()
    Membership.objects.create(account=persona.account, user=user, role=role)
    return user


@pytest.mark.parametrize("role", list(Role))
@pytest.mark.parametrize(("name", "action", "params"), PORTAL, ids=[name for name, _, _ in PORTAL])
def test_each_role_gets_each_portal_page_as_the_table_says(
    owner: Persona, role: Role, name: str, action: Action, params: list[str]
) -> None:
    url = reverse(name, kwargs=sample_arguments(owner, params))
    client = Client()
    client.force_login(member(owner, role))
    statuses = {client.get(url).status_code, client.post(url).status_code}
    if role_may(role, action):
        assert 403 not in statuses, statuses
    else:
        assert statuses == {403}


def key_of(persona: Persona, role: Role, scope: ApiKey.Scope) -> str:
    return ApiKey.issue(account=persona.account, created_by=member(persona, role), scope=scope)[1]


@pytest.mark.parametrize("scope", list(ApiKey.Scope))
@pytest.mark.parametrize("role", list(Role))
@pytest.mark.parametrize(
    ("name", "method", "action", "params"), API, ids=[f"{method} {name}" for name, method, _, _ in API]
)
def test_each_key_gets_each_endpoint_as_its_scope_and_creators_role_say(
    owner: Persona, role: Role, scope: ApiKey.Scope, name: str, method: str, action: Action, params: list[str]
) -> None:
    url = reverse(name, kwargs=sample_arguments(owner, params))
    headers = {"Authorization": f"Bearer {key_of(owner, role, scope)}"}
    response = getattr(Client(), method.lower())(url, headers=headers)
    if role_may(role, action) and action in SCOPES[scope]:
        assert response.status_code != 403, response.content
    else:
        assert (response.status_code, response.json()["error"]["code"]) == (403, "key_not_permitted")


# What every route holding another account's object does for an outsider (a signed-in customer of
# another account, or its full key): 404, as if the object did not exist, and nothing changes. The
# same URL walk as above, so a new route with a job, key or member in its path is covered at once.
OWNED = {"job_id", "key_id", "member_id", "export_id"}
# Its owner too gets 404 from the sample (a job without a result file yet); the finished case, owner
# and outsider: tests/jobs/test_portal_jobs.py.
OWNER_404_TOO = {"job-download"}


def owned_state(persona: Persona) -> list[Any]:
    account = persona.account
    return [
        sorted(Job.objects.filter(account=account).values_list("id", "status")),
        sorted(account.api_keys.values_list("id", "revoked_at", "name")),
        sorted(account.memberships.values_list("id", "role")),
        sorted(account.exports.values_list("id", "status", "file_name")),
    ]


@pytest.mark.parametrize(
    ("name", "params"),
    [(name, params) for name, _, params in PORTAL if OWNED & set(params)],
    ids=[name for name, _, params in PORTAL if OWNED & set(params)],
)
def test_an_outsider_gets_404_from_each_portal_page_of_the_owners_objects(
    owner: Persona, outsider: Persona, name: str, params: list[str]
) -> None:
    url = reverse(name, kwargs=sample_arguments(owner, params))
    before = owned_state(owner)
    client = Client()
    client.force_login(outsider.account.owner)
    statuses = {client.get(url).status_code, client.post(url).status_code}
    assert 404 in statuses and statuses <= {404, 405}, statuses  # 405: the page takes only the other method
    assert owned_state(owner) == before
    if name in OWNER_404_TOO:
        return
    mine = Client()
    mine.force_login(owner.account.owner)
    assert {mine.get(url).status_code, mine.post(url).status_code} - {404, 405}  # the owner's object is there


@pytest.mark.parametrize(
    ("name", "method", "params"),
    [(name, method, params) for name, method, _, params in API if OWNED & set(params)],
    ids=[f"{method} {name}" for name, method, _, params in API if OWNED & set(params)],
)
def test_an_outsider_key_gets_404_from_each_endpoint_of_the_owners_objects(
    owner: Persona, outsider: Persona, name: str, method: str, params: list[str]
) -> None:
    url = reverse(name, kwargs=sample_arguments(owner, params))
    before = owned_state(owner)
    response = getattr(Client(), method.lower())(url, headers={"Authorization": f"Bearer {outsider.api_key}"})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert owned_state(owner) == before
    mine = getattr(Client(), method.lower())(url, headers={"Authorization": f"Bearer {owner.api_key}"})
    assert mine.status_code != 404, mine.content  # the owner's object is there
