"""The `single` scenario's floor (bench/urls.py): what a verification costs before any work."""

from __future__ import annotations

from django.test import Client, override_settings

from tests.conftest import Persona


@override_settings(ROOT_URLCONF="bench.urls")
def test_the_floor_answers_an_authenticated_post_and_refuses_no_key(owner: Persona, client: Client) -> None:
    assert owner.post_json("/v1/_floor", {"email": "someone@example.com"}).status_code == 200
    assert client.post("/v1/_floor", {}, content_type="application/json").status_code == 401
