"""docs/api.md, "Body limits" and "Errors": hostile bodies at every door (the API, the ESP and Stripe
webhooks, the portal's forms) are refused in the door's shape, never a 500; text that is stored holds
no control character; a CSV cell over the reader's field limit names its row. The path, query and
header side of the same family is tests/apikit/test_hostile_input.py.
"""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from billing.models import BillingDetails
from feedback.services import inbox_of, webhook_urls
from tests.conftest import Persona
from tests.support.errors import assert_error_shape
from tests.support.portal import logged_in

# --- Body limits at the door (docs/api.md, "Body limits") -------------------------------------------

MEGABYTE = 1024 * 1024
PROVIDERS = ["sendgrid", "mailgun", "postmark", "ses"]


def _webhook_path(persona: Persona, provider: str) -> str:
    return "/" + webhook_urls(persona.account)[provider].split("://", 1)[1].split("/", 1)[1]


def _padded_json(size: int) -> bytes:
    return b'{"email": "jane@good.com", "x": "' + b"a" * size + b'"}'


@pytest.mark.parametrize("size", [3 * MEGABYTE, 10 * MEGABYTE])
@pytest.mark.parametrize(
    ("method", "path"),
    [("post", "/v1/verify"), ("post", "/v1/verify/batch"), ("post", "/v1/feedback"), ("post", "/v1/keys"),
     ("patch", "/v1/keys/1"), ("post", "/v1/nowhere")],
)  # fmt: skip
def test_a_json_body_over_a_megabyte_is_413_request_too_large(
    owner: Persona, method: str, path: str, size: int
) -> None:
    send = getattr(owner.client, method)
    response = send(path, data=_padded_json(size), content_type="application/json", headers=owner.auth({}))
    assert response.status_code == 413
    assert assert_error_shape(response)["code"] == "request_too_large"


@pytest.mark.parametrize("size", [3 * MEGABYTE, 10 * MEGABYTE])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_webhook_body_over_a_megabyte_is_413_in_the_error_shape(owner: Persona, provider: str, size: int) -> None:
    body = b'[{"email": "a@b.com", "x": "' + b"a" * size + b'"}]'
    response = Client().post(_webhook_path(owner, provider), data=body, content_type="application/json")
    assert response.status_code == 413
    assert assert_error_shape(response)["code"] == "request_too_large"


def test_a_stripe_webhook_body_over_a_megabyte_is_413_in_the_error_shape(db: None) -> None:
    response = Client().post("/webhooks/stripe", data=_padded_json(3 * MEGABYTE), content_type="application/json")
    assert (response.status_code, assert_error_shape(response)["code"]) == (413, "request_too_large")


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("raw", ["[" * 100_000, '{"a":' * 100_000, "[" * 65 + "]" * 65])
def test_a_webhook_body_nested_deeper_than_64_is_a_shaped_400(owner: Persona, provider: str, raw: str) -> None:
    response = Client().post(_webhook_path(owner, provider), data=raw, content_type="application/json")
    error = assert_error_shape(response)
    assert (response.status_code, error["code"]) == (400, "invalid_request")
    assert "deeper than 64" in error["message"]


def _nested(depth: int) -> str:
    """A verify body whose JSON nests `depth` levels, its own object included."""
    return '{"email": "jane@good.com", "x": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"


def test_json_nested_64_levels_is_read_and_65_is_400(owner: Persona) -> None:
    assert owner.post_json("/v1/verify", _nested(64)).status_code == 200
    refused = owner.post_json("/v1/verify", _nested(65))
    assert (refused.status_code, assert_error_shape(refused)["code"]) == (400, "invalid_request")


@pytest.mark.parametrize("path", ["/v1/verify/bulk", "/v1/verify/bulk/preview"])
def test_an_upload_form_field_over_a_megabyte_is_413(owner: Persona, path: str) -> None:
    data = {"file": SimpleUploadedFile("a.csv", b"a@good.com\n"), "callback_url": "https://x.com/" + "a" * 3 * MEGABYTE}
    response = owner.client.post(path, data=data, headers=owner.auth({}))
    assert (response.status_code, assert_error_shape(response)["code"]) == (413, "request_too_large")


@pytest.mark.parametrize("page", ["/verify", "/login", "/keys", "/jobs/new"])
def test_a_portal_form_over_its_limit_is_a_plain_413_page(owner: Persona, page: str) -> None:
    response = logged_in(owner).post(
        page, data="email=" + "a" * 3 * MEGABYTE, content_type="application/x-www-form-urlencoded"
    )
    assert response.status_code == 413
    assert response["Content-Type"].startswith("text/html") and b"Too large" in response.content


def test_a_portal_form_field_over_a_megabyte_in_a_multipart_upload_is_a_plain_413(owner: Persona) -> None:
    data = {"file": SimpleUploadedFile("a.csv", b"a@good.com\n"), "callback_url": "a" * 2 * MEGABYTE}
    response = logged_in(owner).post("/jobs/new", data=data)
    assert response.status_code == 413
    assert response["Content-Type"].startswith("text/html")


# --- Text that is stored: no NUL nor other C0 control character (docs/api.md, "Errors") --------------

CONTROLS = ["\x00", "\x01", "\x07", "\x1b", "\x1f", "\t", "\n"]


@pytest.mark.parametrize("control", CONTROLS, ids=repr)
def test_a_control_character_in_a_key_name_is_400_naming_the_field(owner: Persona, control: str) -> None:
    made = owner.post_json("/v1/keys", {"name": f"CRM{control}sync"})
    assert (made.status_code, assert_error_shape(made)["param"]) == (400, "name")
    key = owner.account.api_keys.get()
    changed = owner.client.patch(
        f"/v1/keys/{key.pk}", data=json.dumps({"name": f"a{control}"}), content_type="application/json",
        headers=owner.auth({}),
    )  # fmt: skip
    assert (changed.status_code, assert_error_shape(changed)["param"]) == (400, "name")
    assert owner.account.api_keys.get().name == key.name


@pytest.mark.parametrize("control", CONTROLS, ids=repr)
def test_a_control_character_in_an_origin_is_400_naming_allowed_origins(owner: Persona, control: str) -> None:
    body = {"kind": "publishable", "allowed_origins": [f"https://shop.exa{control}mple.com"]}
    response = owner.post_json("/v1/keys", body)
    assert (response.status_code, assert_error_shape(response)["param"]) == (400, "allowed_origins")


def _stored_texts(persona: Persona) -> list[str]:
    """Every text the portal forms below store for the account."""
    details = BillingDetails.objects.filter(account=persona.account).first()
    texts = list(persona.account.api_keys.values_list("name", flat=True))
    texts += [details.name, details.address] if details else []
    return [*texts, inbox_of(persona.account).mailgun_signing_key]


@pytest.mark.parametrize("control", ["\x01", "\x07", "\x1b", "\x1f"], ids=repr)
@pytest.mark.parametrize(
    ("page", "form"),
    [
        ("/keys", {"name": "CR{}M", "scope": "verify"}),  # inside: a form strips \x1c-\x1f at the ends
        ("/billing/details", {"name": "Ac{}me", "address": "1 Road", "tax_id": ""}),
        ("/billing/details", {"name": "Acme", "address": "1 Road{}\nTown", "tax_id": ""}),
        ("/feedback/mailgun-key", {"mailgun_signing_key": "key-{}abc"}),
    ],
)
def test_a_control_character_in_a_portal_form_is_refused_and_not_stored(
    owner: Persona, page: str, form: dict[str, str], control: str
) -> None:
    response = logged_in(owner).post(page, {name: value.format(control) for name, value in form.items()}, follow=True)
    assert response.status_code == 200
    assert "Control characters (such as NUL) are not allowed." in response.content.decode()
    assert not any(control in text for text in _stored_texts(owner))


def test_a_line_break_in_a_billing_address_is_kept(owner: Persona) -> None:
    response = logged_in(owner).post("/billing/details", {"name": "Acme", "address": "1 Road\r\nTown", "tax_id": ""})
    assert response.status_code == 302


# --- CSV cells over the reader's field limit (131,072 characters) -----------------------------------


def test_a_feedback_csv_with_a_cell_over_the_field_limit_is_400_naming_the_row(owner: Persona) -> None:
    rows = "".join(f"user{n}@good.com,delivered\n" for n in range(40_000))
    text = rows + "jane@good.com,delivered," + "x" * 131_073 + "\n"
    assert len(text) > 1_000_000
    upload = SimpleUploadedFile("events.csv", text.encode(), "text/csv")
    response = logged_in(owner).post("/feedback/upload", {"file": upload})
    assert response.status_code == 400
    assert "row 40001" in " ".join(response.context["form"].errors["file"])


@pytest.mark.parametrize("path", ["/v1/verify/bulk", "/v1/verify/bulk/preview"])
def test_a_bulk_csv_with_a_cell_over_the_field_limit_is_400_naming_the_row(owner: Persona, path: str) -> None:
    content = b"email,note\n" + b"a@good.com,x\n" * 10 + b'b@good.com,"' + b"y" * 140_000 + b'"\n'
    response = owner.client.post(path, data={"file": SimpleUploadedFile("a.csv", content)}, headers=owner.auth({}))
    error = assert_error_shape(response)
    assert (response.status_code, error["code"], error["param"]) == (400, "invalid_file", "file")
    assert "row 12" in error["message"]
