"""What each key scope is said to do — in the portal's scope menu and keys page, docs/api.md and the
OpenAPI schema, all from `ApiKey.Scope`'s words — is what the permission table lets it do."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from accounts.models import ApiKey
from accounts.permissions import SCOPES, Action
from tests.conftest import Persona
from tests.support.portal import logged_in

ROOT = Path(__file__).resolve().parents[2]
# The word a scope's description uses for each action the API's keys can be given.
WORDS = {
    Action.VERIFY: "verif",
    Action.BULK: "bulk",
    Action.JOBS_READ: "jobs",
    Action.JOBS_DELETE: "deleting",
    Action.USAGE: "usage",
    Action.KEYS_ADMIN: "keys",
    Action.ERASE: "erasures",
    Action.EXPORT: "exports",
}


def said(description: str, word: str) -> str:
    """ "granted", "refused" (after "no "), or "silent"."""
    found = re.search(rf"(\bno\s+)?\b{word}", description, re.IGNORECASE)
    return "silent" if found is None else "refused" if found[1] else "granted"


@pytest.mark.parametrize("scope", list(ApiKey.Scope))
def test_a_scopes_description_names_what_the_permission_table_grants_and_nothing_it_refuses(
    scope: ApiKey.Scope,
) -> None:
    assert set(SCOPES[scope]) <= set(WORDS), "an action the descriptions have no word for"
    for action, word in WORDS.items():
        expected = {"granted"} if action in SCOPES[scope] else {"refused", "silent"}
        assert said(scope.label, word) in expected, (scope.value, action.value, scope.label)


def test_a_verify_key_is_said_to_run_no_bulk_list_and_the_api_refuses_it_one(owner: Persona) -> None:
    assert said(ApiKey.Scope.VERIFY.label, "bulk") == "refused"
    owner.api_key = ApiKey.issue(account=owner.account, scope=ApiKey.Scope.VERIFY)[1]
    upload = SimpleUploadedFile("list.csv", b"email\njane@good.com\n", content_type="text/csv")
    response = owner.client.post("/v1/verify/bulk", {"file": upload}, headers=owner.auth({}))
    assert (response.status_code, response.json()["error"]["code"]) == (403, "key_not_permitted")


def test_the_keys_page_says_each_scope_in_those_words_in_its_menu_and_its_note(owner: Persona) -> None:
    page = logged_in(owner).get(reverse("keys")).content.decode()
    options = re.findall(r'<option value="(\w+)"[^>]*>([^<]+)</option>', page.split('name="scope"', 1)[1])
    assert dict(options[:3]) == {scope.value: scope.label for scope in ApiKey.Scope}
    note = page.split("data-scope-descriptions>", 1)[1].split("</ul>", 1)[0]
    assert re.findall(r"<li>([^<]+)</li>", note) == [scope.label for scope in ApiKey.Scope]
    assert "single and bulk" not in page


def test_the_docs_and_the_openapi_schema_say_each_scope_in_those_words(db: None) -> None:
    api_doc = (ROOT / "docs" / "api.md").read_text()
    schema = json.dumps(Client().get("/v1/openapi.json").json())
    for scope in ApiKey.Scope:
        assert f"- `{scope.value}`: {scope.label}" in api_doc
        assert f"`{scope.value}`: {scope.label}" in schema, scope.value
