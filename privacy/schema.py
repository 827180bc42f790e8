"""The export's signed link in the OpenAPI schema: a plain Django view (no API key), so drf-spectacular
does not see it (as jobs/schema.py does for the result link)."""

from __future__ import annotations

from typing import Any

ERROR_REF = {"$ref": "#/components/schemas/Error"}


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": ERROR_REF}}}


def document_export_link(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    result["paths"]["/v1/account/export/link/{token}"] = {
        "get": {
            "operationId": "account_export_link",
            "summary": "Download an export's ZIP (the link mailed to the owner, and the export's download_url)",
            "description": "A signed link; no API key. It downloads for 24 hours after the export was done.",
            "tags": ["account"],
            "security": [],
            "parameters": [{"name": "token", "in": "path", "required": True, "schema": {"type": "string"}}],
            "responses": {
                "200": {
                    "description": "The ZIP: README.txt, then each part as .json and .csv (docs/privacy.md, Export).",
                    "content": {"application/zip": {"schema": {"type": "string", "format": "binary"}}},
                },
                "404": _error("not_found: an unknown or tampered link"),
                "405": _error("method_not_allowed: anything but GET or HEAD"),
                "409": _error("export_not_ready: the export is queued, running or failed"),
                "410": _error("export_expired: 24 hours since it was done, or an erasure since: its file is deleted"),
            },
        }
    }
    return result
