"""The Content-Security-Policy every response carries (django-csp), and the API reference's additions."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client


def policy(response: Any) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    return {name: values for name, *values in (part.split() for part in header.split(";"))}


@pytest.mark.parametrize("path", ["/", "/login", "/admin/login/", "/v1/verify", "/v1/openapi.json"])
def test_every_page_allows_only_its_own_scripts_and_styles(db: None, path: str) -> None:
    directives = policy(Client().get(path))
    assert directives["script-src"] == ["'self'"]
    assert directives["style-src"] == ["'self'"]
    assert directives["object-src"] == directives["base-uri"] == directives["frame-ancestors"] == ["'none'"]


def test_the_api_reference_nonces_its_one_inline_script(db: None) -> None:
    response = Client().get("/v1/docs")
    directives = policy(response)
    nonce = next(value for value in directives["script-src"] if value.startswith("'nonce-"))
    assert f'<script nonce="{nonce[7:-1]}">' in response.content.decode()
    assert "'unsafe-inline'" not in response["Content-Security-Policy"]
    assert "'unsafe-eval'" not in response["Content-Security-Policy"]
    assert directives["worker-src"] == ["blob:"]
