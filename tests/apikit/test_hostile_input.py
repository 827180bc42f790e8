"""docs/api.md, "Errors": no input, however malformed, produces a 500 or a body outside the error shape.

Hostile values (NUL, lone surrogates, invalid UTF-8, JSON nested thousands deep, over-long
values) are thrown at every path, query and body field of every API endpoint, every portal
page and the admin. CI runs this module on SQLite and on PostgreSQL, whose text type refuses
NUL with an error rather than an empty result.
"""

from __future__ import annotations

import io
import json
from typing import Any
from wsgiref.util import setup_testing_defaults

import pytest
from django.contrib import admin
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from billing.models import LedgerEntry
from config.wsgi import application
from tests.conftest import Persona
from tests.support.errors import assert_error_shape
from tests.support.portal import logged_in

NUL = "\x00"
# Percent-escapes as a client would send them in a URL: NUL, a UTF-8-encoded lone surrogate
# (invalid UTF-8), a lone continuation byte, and an over-long value.
PATH_VALUES = ["%00", "job_%00", "a%0Ab", "%ED%A0%80", "%C0%AF", "%FF", "x" * 5000, "job_" + "A" * 24 + "%00"]
# Raw JSON text of a string holding a lone surrogate: what json.dumps writes for "a\ud800@...".
SURROGATE_JSON = '"a\\ud800@acme-corp.com"'


def assert_answered(response: Any) -> None:
    """A portal page: any answer but a server error (a 404 page, a form error, a redirect to log in)."""
    assert response.status_code < 500, response.content[:300]


# --- API: path and query ---------------------------------------------------------------------------


@pytest.mark.parametrize("value", PATH_VALUES)
@pytest.mark.parametrize(
    "template", ["/v1/jobs/{}", "/v1/results/{}", "/v1/{}", "/v1/jobs/{}/x", "/v1/jobs/{}/results"]
)
def test_hostile_api_path_is_a_shaped_error(owner: Persona, template: str, value: str) -> None:
    error = assert_error_shape(owner.get(template.format(value)))
    assert error["code"] == "not_found"


@pytest.mark.parametrize("value", PATH_VALUES)
def test_hostile_job_delete_path_is_404(owner: Persona, value: str) -> None:
    response = owner.client.delete(f"/v1/jobs/{value}", headers=owner.auth({}))
    assert assert_error_shape(response)["code"] == "not_found"


@pytest.mark.parametrize("value", ["", *PATH_VALUES, "valid," * 2000])
@pytest.mark.parametrize("name", ["status", "columns"])
def test_hostile_results_query_is_400(owner: Persona, name: str, value: str) -> None:
    job_id = owner.client.post(
        "/v1/verify/bulk", data={"file": SimpleUploadedFile("a.csv", b"a@good.com\n")}, headers=owner.auth({})
    ).json()["id"]
    error = assert_error_shape(owner.get(f"/v1/jobs/{job_id}/results?{name}={value}"))
    assert (error["code"], error["param"]) == ("invalid_request", name)


@pytest.mark.parametrize("value", ["", *PATH_VALUES, "99" * 3000])
@pytest.mark.parametrize("name", ["starting_after", "limit"])
def test_hostile_job_list_query_is_400(owner: Persona, name: str, value: str) -> None:
    error = assert_error_shape(owner.get(f"/v1/jobs?{name}={value}"))
    assert (error["code"], error["param"]) == ("invalid_request", name)


@pytest.mark.parametrize("value", PATH_VALUES)
def test_hostile_query_on_other_endpoints_changes_nothing(owner: Persona, value: str) -> None:
    assert owner.get(f"/v1/openapi.json?format={value}").status_code < 500
    assert owner.verify("jane@good.com").status_code == 200  # the query string of a POST is ignored
    response = owner.client.post(
        f"/v1/verify?email={value}", data="{}", content_type="application/json", headers=owner.auth({})
    )
    assert assert_error_shape(response)["param"] == "email"


# --- API: JSON bodies ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        '{"email": ' + SURROGATE_JSON + "}",
        '{"email": "jane@good.com", "validation_mode": ' + SURROGATE_JSON + "}",
        '{"email": "jane@good.com", ' + SURROGATE_JSON + ": 1}",
        '{"email": "jane@good.com", "x": ["\\udfff"]}',
        "[" * 2000 + "]" * 2000,
        '{"email": ' + "[" * 2000 + "]" * 2000 + "}",
        '{"email": "jane@good.com", "x": ' + '{"a":' * 1500 + "1" + "}" * 1500 + "}",
        "\x00",
        '{"email": "jane@good.com"}\x00',
        '{"email\x00": "jane@good.com"}',
        '{"email": "jane@good.com", "validation_mode": "fast\\u0000"}',
        '{"email": "' + "a" * 1001 + '"}',
        '{"email": 1e999}',
        '{"email": ' + "9" * 5000 + "}",
    ],
    ids=lambda raw: repr(raw[:40]),
)
def test_hostile_verify_body_is_400_and_costs_nothing(owner: Persona, raw: str) -> None:
    before = LedgerEntry.objects.filter(account=owner.account).count()
    error = assert_error_shape(owner.post_json("/v1/verify", raw.encode("utf-8", "surrogatepass")))
    assert error["code"] == "invalid_request"
    assert LedgerEntry.objects.filter(account=owner.account).count() == before


def test_a_properly_paired_surrogate_escape_is_an_ordinary_character(owner: Persona) -> None:
    response = owner.post_json("/v1/verify", b'{"email": "\\ud83d\\ude00@good.com"}')
    assert response.status_code == 200
    assert response.json()["email"] == "\U0001f600@good.com"


@pytest.mark.parametrize("email", [NUL, f"a{NUL}@good.com", f"jane@good.com{NUL}", f"jane@{NUL}.com"])
def test_nul_in_an_address_is_a_verdict_on_every_database(owner: Persona, email: str) -> None:
    response = owner.verify(email)
    assert response.status_code == 200
    assert response.json()["sub_status"] == "invalid_syntax"
    assert owner.verify(email).json()["cached"] is False


@pytest.mark.parametrize(
    "headers",
    [
        {"Idempotency-Key": f"k{NUL}"},
        {"Idempotency-Key": "k" * 10_000},
        {"X-Request-Id": f"r{NUL}"},
        {"X-Request-Id": "r" * 10_000},
    ],
    ids=["idem-nul", "idem-long", "rid-nul", "rid-long"],
)
def test_hostile_headers_are_refused_or_ignored(owner: Persona, headers: dict[str, str]) -> None:
    response = owner.verify("jane@good.com", **headers)
    if response.status_code != 200:
        assert assert_error_shape(response)["param"] == "Idempotency-Key"
    assert NUL not in response["X-Request-Id"] and len(response["X-Request-Id"]) <= 200


@pytest.mark.parametrize("key", [f"ev_live_{NUL}", "ev_live_" + "x" * 10_000, f"{NUL}"])
def test_hostile_api_key_is_401(db: None, key: str) -> None:
    response = Client().get("/v1/jobs", headers={"Authorization": f"Bearer {key}"})
    assert assert_error_shape(response)["code"] == "invalid_api_key"


# --- API: multipart --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "callback_url",
    [
        f"https://hooks{NUL}.example.com/x",
        f"https://hooks.example.com/{NUL}",
        "https://" + "h" * 5000 + ".com/",
        b"https://hooks.example.com/\xed\xa0\x80",  # a UTF-8-encoded lone surrogate: invalid UTF-8
    ],
    ids=["nul-host", "nul-path", "long-host", "surrogate"],
)
@pytest.mark.parametrize("path", ["/v1/verify/bulk", "/v1/verify/bulk/preview"])
def test_hostile_callback_url_is_refused(owner: Persona, callback_url: str | bytes, path: str) -> None:
    data = {"file": SimpleUploadedFile("a.csv", b"a@good.com\n"), "callback_url": callback_url}
    response = owner.client.post(path, data=data, headers=owner.auth({}))
    error = assert_error_shape(response)
    assert error["param"] == "callback_url"


@pytest.mark.parametrize("email_column", [NUL, f"email{NUL}", "x" * 5000, b"\xed\xa0\x80", "99" * 3000, "-1", "\u0661"])
@pytest.mark.parametrize("path", ["/v1/verify/bulk", "/v1/verify/bulk/preview"])
def test_hostile_email_column_is_refused_on_its_param(owner: Persona, email_column: str | bytes, path: str) -> None:
    data = {"file": SimpleUploadedFile("a.csv", b"email\na@good.com\n"), "email_column": email_column}
    error = assert_error_shape(owner.client.post(path, data=data, headers=owner.auth({})))
    assert (error["code"], error["param"]) == ("invalid_request", "email_column")


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("a.csv", b"\x00\x00\x00"),
        ("a.csv", b"email\na\x00@good.com\n"),
        (f"a{NUL}.csv", b"a@good.com\n"),
        ("a" * 5000 + ".csv", b"a@good.com\n"),
        ("a.csv", b"\xed\xa0\x80@good.com\n"),
        ("a.csv", b"\xff\xfe\x00\xd8@\x00g\x00"),
    ],
    ids=["all-nul", "nul-address", "nul-name", "long-name", "utf8-surrogate", "utf16-lone-surrogate"],
)
@pytest.mark.parametrize("path", ["/v1/verify/bulk", "/v1/verify/bulk/preview"])
def test_hostile_upload_is_accepted_or_refused_never_500(owner: Persona, name: str, content: bytes, path: str) -> None:
    response = owner.client.post(path, data={"file": SimpleUploadedFile(name, content)}, headers=owner.auth({}))
    if response.status_code not in (200, 202):
        assert assert_error_shape(response)["param"] == "file"


# --- the portal and the admin ----------------------------------------------------------------------

PORTAL_PAGES = [
    "/jobs/{}",
    "/jobs/{}/progress",
    "/jobs/{}/download",
    "/jobs/{}/download?status={}&columns={}",
    "/jobs/{}/delete",
    "/keys/{}/revoke",
    "/password/reset/{}/{}",
    "/{}",
]


@pytest.mark.parametrize("value", PATH_VALUES)
@pytest.mark.parametrize("template", PORTAL_PAGES)
def test_hostile_portal_path_is_never_500(owner: Persona, template: str, value: str) -> None:
    client = logged_in(owner)
    assert_answered(client.get(template.format(value, value, value)))
    assert_answered(Client().get(template.format(value, value, value)))
    if template.endswith("/delete"):
        assert_answered(client.post(template.format(value)))


# Form-encoded, as a browser sends them: NUL, invalid UTF-8 (an encoded lone surrogate), very long.
@pytest.mark.parametrize("value", ["%00", "jane%00%40good.com", "%ED%A0%80", "a" * 10_000])
@pytest.mark.parametrize(
    ("page", "field"),
    [
        ("/verify", "email"),
        ("/login", "username"),
        ("/login", "password"),
        ("/signup", "email"),
        ("/password/reset", "email"),
        ("/jobs/new", "callback_url"),
        ("/jobs/new", "email_column"),
        ("/jobs/new/preview", "callback_url"),
        ("/jobs/new/preview", "email_column"),
        ("/jobs?status={}", None),
        ("/jobs?page={}", None),
    ],
)
def test_hostile_portal_form_values_are_never_500(owner: Persona, page: str, field: str | None, value: str) -> None:
    client = logged_in(owner)
    if field is None:
        assert_answered(client.get(page.format(value)))
        return
    if page.startswith("/jobs/new"):
        raw = value.replace("%00", "\x00").replace("%40", "@").encode().replace(b"%ED%A0%80", b"\xed\xa0\x80")
        data = {field: raw, "file": SimpleUploadedFile("a.csv", b"a@good.com\n")}
        assert_answered(client.post(page, data=data))
        return
    form = f"{field}={value}"
    assert_answered(client.post(page, data=form, content_type="application/x-www-form-urlencoded"))


def _admin_urls() -> list[str]:
    urls = []
    for model, model_admin in admin.site._registry.items():
        base = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        urls += [base + "?q={}", base + "{}/change/", base + "{}/delete/", base + "?o={}"]
        filters = [name for name in model_admin.list_filter if isinstance(name, str)]
        urls += [base + f"?{name}__exact={{}}" for name in filters] + [base + f"?{name}={{}}" for name in filters]
    return urls


@pytest.mark.parametrize("value", ["%00", "%ED%A0%80", "x" * 3000])
def test_hostile_admin_paths_and_searches_are_never_500(staff: Any, value: str) -> None:
    client = Client()
    client.force_login(staff)
    for url in _admin_urls():
        response = client.get(url.format(value))
        assert response.status_code < 500, (url, response.status_code)


def test_the_openapi_schema_survives_a_hostile_accept_header(db: None) -> None:
    response = Client().get("/v1/openapi.json", headers={"Accept": "\x00" * 100})
    assert response.status_code < 500
    json.loads(response.content) if response.status_code == 200 else assert_error_shape(response)


@pytest.mark.parametrize("value", ["\x00", "\ud800", "Bearer " + "x" * 10_000, "Bearer é"])
def test_hostile_metrics_tokens_are_a_shaped_401(metrics_on: None, db: None, value: str) -> None:
    response = Client().get("/metrics", HTTP_AUTHORIZATION=value)
    assert response.status_code == 401
    assert assert_error_shape(response)["code"] == "authentication_required"


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/admin/dashboard/"])
@pytest.mark.parametrize("value", PATH_VALUES)
def test_hostile_queries_to_the_probes_and_dashboard_are_never_500(staff: Any, path: str, value: str) -> None:
    client = Client()
    client.force_login(staff)
    response = client.get(f"{path}?x={value}&{value}={value}")
    # 503: /readyz without a qcluster; 400: the admin's pages refuse a query holding NUL.
    assert response.status_code in (200, 400, 503), response.content[:300]


# --- Host header and framing ---------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/v1/verify", "/v1/jobs", "/v1/nowhere"])
def test_a_disallowed_host_on_the_api_is_a_shaped_400(path: str) -> None:
    response = Client().get(path, headers={"Host": "evil.example"})
    assert response.status_code == 400
    assert assert_error_shape(response) == {
        "code": "invalid_request",
        "message": "The Host header names no site this service answers for.",
        "param": None,
    }


def test_a_disallowed_host_on_a_portal_page_is_still_a_plain_400(db: None) -> None:
    response = Client().get("/", headers={"Host": "evil.example"})
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")


def test_a_chunked_body_a_server_did_not_de_chunk_is_411_in_the_error_shape() -> None:
    """runserver passes a chunked body on unread; gunicorn's de-chunked one: tests/config/test_gunicorn.py."""
    environ: dict[str, Any] = {}
    setup_testing_defaults(environ)
    environ.update(
        REQUEST_METHOD="POST",
        PATH_INFO="/v1/verify",
        HTTP_TRANSFER_ENCODING="chunked",
        CONTENT_TYPE="application/json",
    )
    environ["wsgi.input"] = io.BytesIO(b'1a\r\n{"email": "jane@good.com"}\r\n0\r\n\r\n')
    started: list[Any] = []
    body = b"".join(application(environ, lambda status, headers: started.append((status, dict(headers)))))
    ((status, headers),) = started
    assert status == "411 Length Required"
    assert headers["X-Request-Id"].startswith("req_")
    assert json.loads(body) == {
        "error": {"code": "length_required", "message": "Send a Content-Length header.", "param": None}
    }
