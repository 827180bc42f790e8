"""What every error answer looks like (docs/api.md, "Errors"), for the suites that throw hostile input."""

from __future__ import annotations

from typing import Any


def assert_error_shape(response: Any) -> dict:
    """A 4xx in the one error shape: `{"error": {"code", "message", "param"}}` and nothing else."""
    assert response.status_code < 500, response.content[:300]
    assert response.status_code >= 400, response.status_code
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "param"}, body
    return body["error"]
