from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "apikit.authentication.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": (
                "An API key: `ev_live_` + 32 characters, or a test key `ev_test_` + 32 characters, which answers "
                "every operation in the same shapes from the sandbox: no credit, no DNS, fixed answers for "
                "`valid@sandbox.example`, `invalid@sandbox.example`, … (see the README, Test keys), and sees only "
                "test jobs."
            ),
        }


# Headers on every key-authenticated answer, errors included (README, "Rate limits").
_INT = {"type": "integer", "minimum": 0}
AUTHENTICATED_HEADERS = {
    "X-Credits-Remaining": {"description": "The account's credit balance after this request.", "schema": _INT},
    "RateLimit-Policy": {
        "description": 'The key\'s quota, a structured field: `"plan";q=<requests>;w=<window seconds>`.',
        "schema": {"type": "string", "example": '"plan";q=20;w=1'},
    },
    "RateLimit": {
        "description": 'Where the key stands: `"plan";r=<requests left>;t=<seconds until the window resets>`.',
        "schema": {"type": "string", "example": '"plan";r=17;t=1'},
    },
}
RETRY_AFTER = {"description": "Seconds to wait before retrying.", "schema": {"type": "integer", "minimum": 1}}


def document_authenticated_headers(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Name the headers every key-authenticated response carries (401s are not authenticated)."""
    for operations in result["paths"].values():
        for operation in operations.values():
            if operation.get("security") == []:
                continue
            for status, response in operation["responses"].items():
                if status == "401":
                    continue
                headers = response.setdefault("headers", {})
                headers.update(AUTHENTICATED_HEADERS)
                if status == "429":
                    headers["Retry-After"] = RETRY_AFTER
    return result
