from __future__ import annotations

from rest_framework.renderers import JSONRenderer


class UTF8JSONRenderer(JSONRenderer):
    """`application/json; charset=utf-8`, compact, as the contract's conventions say."""

    charset = "utf-8"


def render_json(data: object) -> bytes:
    return UTF8JSONRenderer().render(data)


JSON_CONTENT_TYPE = "application/json; charset=utf-8"
