"""JSON bytes as we write them everywhere: compact UTF-8, `application/json; charset=utf-8`.

API responses (DRF renders with `UTF8JSONRenderer`), stored idempotent replies and callback bodies
all come out of here, so the same data is the same bytes whichever door it leaves by.
"""

from __future__ import annotations

from rest_framework.renderers import JSONRenderer

JSON_CONTENT_TYPE = "application/json; charset=utf-8"


class UTF8JSONRenderer(JSONRenderer):
    """`application/json; charset=utf-8`, compact (docs/api.md, conventions)."""

    charset = "utf-8"


def render_json(data: object) -> bytes:
    return UTF8JSONRenderer().render(data)
