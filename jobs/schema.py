"""The result download in the OpenAPI schema.

`/v1/results/{token}` is a plain Django view (a signed link anyone holding it may use, no API
key), so drf-spectacular does not see it; this hook describes it next to the operations.
"""

from __future__ import annotations

from typing import Any

ERROR_REF = {"$ref": "#/components/schemas/Error"}


def document_result_download(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    result["paths"]["/v1/results/{token}"] = {
        "get": {
            "operationId": "result_download",
            "summary": "Download a job's result CSV (the link in result_download_url)",
            "description": (
                "A signed link valid 1 hour from when it was issued; no API key. With S3 storage the link is "
                "S3's presigned URL instead, and S3 answers (403 when expired)."
            ),
            "tags": ["results"],
            "security": [],
            "parameters": [{"name": "token", "in": "path", "required": True, "schema": {"type": "string"}}],
            "responses": {
                "200": {
                    "description": "The result file (its columns: docs/bulk.md, Download).",
                    "content": {"text/csv": {"schema": {"type": "string"}}},  # UTF-8 text
                },
                "404": {
                    "description": "not_found: unknown, tampered or expired link",
                    "content": {"application/json": {"schema": ERROR_REF}},
                },
            },
        }
    }
    return result
