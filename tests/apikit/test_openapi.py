"""The OpenAPI schema is valid, and a property-based run against it finds no 500 and nothing off-schema."""

from __future__ import annotations

import pytest
import schemathesis
from django.core.management import call_command
from hypothesis import HealthCheck, given, settings
from schemathesis.specs.openapi.checks import (
    positive_data_acceptance,
    response_schema_conformance,
    status_code_conformance,
)

from config.wsgi import application
from tests.conftest import make_persona
from tests.support.db import committed_db
from tests.support.examples import examples
from verification.engine.providers import PROVIDERS


def test_schema_is_valid_openapi(client, tmp_path) -> None:
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))
    response = client.get("/v1/openapi.json")
    assert response.status_code == 200
    assert response.json()["paths"]["/v1/verify"]["post"]["responses"]["200"]


def test_schema_describes_the_job_callback_as_a_webhook_with_both_signatures(client) -> None:
    schema = client.get("/v1/openapi.json").json()
    event = schema["webhooks"]["bulk_job_finished"]["post"]
    assert event["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/CallbackBody"
    }
    assert "webhook-signature" in event["description"] and "X-Service-Signature" in event["description"]


def test_schema_names_the_rate_limit_fields_on_authenticated_answers(client) -> None:
    paths = client.get("/v1/openapi.json").json()["paths"]
    for path, operation in [("/v1/verify/batch", "post"), ("/v1/account", "get"), ("/v1/jobs", "get")]:
        responses = paths[path][operation]["responses"]
        assert {"RateLimit", "RateLimit-Policy", "X-Credits-Remaining"} <= set(responses["200"]["headers"])
        assert "Retry-After" in responses["429"]["headers"]
        assert "headers" not in responses["401"]
    assert "headers" not in paths["/v1/results/{token}"]["get"]["responses"]["200"]


def test_schema_documents_the_jobs_breakdown_by_mail_provider(client) -> None:
    schemas = client.get("/v1/openapi.json").json()["components"]["schemas"]
    assert schemas["Breakdown"]["properties"]["mail_provider"] == {"$ref": "#/components/schemas/MailProviderCounts"}
    assert "mail_provider" in schemas["Breakdown"]["required"]
    assert set(schemas["MailProviderCounts"]["properties"]) == set(PROVIDERS)


def test_docs_page_is_served_without_a_cdn(client) -> None:
    response = client.get("/v1/docs")
    assert response.status_code == 200
    assert b"cdn." not in response.content and b"unpkg" not in response.content


@committed_db  # the raw WSGI app closes the connection after each request, as in production
def test_fuzzing_verify_finds_no_500_and_nothing_off_schema() -> None:
    owner = make_persona(plan_code="enterprise", credits=10_000)
    schema = schemathesis.openapi.from_wsgi("/v1/openapi.json", application)
    operation = schema["/v1/verify"]["POST"]
    headers = {"Authorization": f"Bearer {owner.api_key}"}
    seen: set[int] = set()

    @settings(max_examples=examples(200), deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(case=operation.as_strategy())
    def check(case) -> None:
        case.headers = {**(case.headers or {}), **headers}
        response = case.call()
        seen.add(response.status_code)
        assert response.status_code < 500, response.text
        # Three documented refusals of schema-valid input: "deep" (deep_mode_disabled), a repeated
        # Idempotency-Key with another body (422) and a callback_url that does not resolve to a public
        # address (invalid_callback_url). Everything else valid must be accepted.
        body = case.body if isinstance(case.body, dict) else {}
        refused = body.get("validation_mode") == "deep" or "callback_url" in body
        expected_refusal = refused or "Idempotency-Key" in case.headers
        case.validate_response(response, excluded_checks=[positive_data_acceptance] if expected_refusal else None)

    check()
    assert 200 in seen  # the run reached the verifier, not only the validation errors


OPERATIONS = [
    ("/v1/verify", "POST"),
    ("/v1/verify/batch", "POST"),
    ("/v1/account", "GET"),
    ("/v1/feedback", "POST"),
    ("/v1/privacy/erasures", "POST"),
    ("/v1/account/export", "POST"),
    ("/v1/account/export/{export_id}", "GET"),
    ("/v1/account/export/{export_id}/download", "GET"),
    ("/v1/account/export/link/{token}", "GET"),
    ("/v1/verify/bulk", "POST"),
    ("/v1/verify/bulk/preview", "POST"),
    ("/v1/jobs", "GET"),
    ("/v1/jobs/{job_id}", "GET"),
    ("/v1/jobs/{job_id}", "DELETE"),
    ("/v1/jobs/{job_id}/results", "GET"),
    ("/v1/results/{token}", "GET"),
    ("/v1/keys", "GET"),
    ("/v1/keys", "POST"),
    ("/v1/keys/{key_id}", "PATCH"),
    ("/v1/keys/{key_id}", "DELETE"),
    ("/v1/verifications/{verification_id}", "GET"),
]


@pytest.mark.django_db  # the first request of a process builds the schema, and that reads the database
def test_every_operation_of_the_schema_is_fuzzed() -> None:
    schema = schemathesis.openapi.from_wsgi("/v1/openapi.json", application)
    assert sorted((op.path, op.method.upper()) for op in _operations(schema)) == sorted(OPERATIONS)


def _operations(schema):
    return [result.ok() for result in schema.get_all_operations()]


@committed_db
@pytest.mark.parametrize(("path", "method"), OPERATIONS)
def test_fuzzing_finds_no_500_and_no_undocumented_status(path: str, method: str) -> None:
    owner = make_persona(plan_code="enterprise", credits=10_000)
    schema = schemathesis.openapi.from_wsgi("/v1/openapi.json", application)
    operation = schema[path][method]
    headers = {"Authorization": f"Bearer {owner.api_key}"}

    @settings(max_examples=examples(60), deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(case=operation.as_strategy())
    def check(case) -> None:
        case.headers = {**(case.headers or {}), **headers}
        response = case.call()
        assert response.status_code < 500, response.text
        # Every status is documented, with the documented body (the one error shape for errors).
        case.validate_response(response, checks=[status_code_conformance, response_schema_conformance])

    check()
