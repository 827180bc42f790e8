"""JSON bytes as we write them everywhere: compact UTF-8, `application/json; charset=utf-8`.

API responses (DRF renders with `UTF8JSONRenderer`), stored idempotent replies and callback bodies
all come out of here, so the same data is the same bytes whichever door it leaves by.
"""

from __future__ import annotations

import json
from typing import Any

from rest_framework.renderers import JSONRenderer

from lib.errors import DomainError

JSON_CONTENT_TYPE = "application/json; charset=utf-8"


class UTF8JSONRenderer(JSONRenderer):
    """`application/json; charset=utf-8`, compact (docs/api.md, conventions)."""

    charset = "utf-8"


def render_json(data: object) -> bytes:
    return UTF8JSONRenderer().render(data)


# No body of ours, nor any sending service's event, nests anywhere near this deep; deeper JSON is an
# attack on the parser's recursion (docs/api.md, "Body limits").
MAX_JSON_DEPTH = 64


class JsonRefused(DomainError):
    """A body that is not JSON we read: malformed, not UTF-8, nested too deep, or holding a lone surrogate."""


def json_parsed(raw: bytes) -> Any:
    """`raw` parsed as JSON, or JsonRefused saying why not (never a RecursionError)."""
    _refuse_deep_nesting(raw)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise JsonRefused(f"The request body is not valid JSON: {exc}.") from None
    if b"\\u" in raw:
        _refuse_lone_surrogates(data)
    return data


def _refuse_deep_nesting(raw: bytes) -> None:
    if raw.count(b"[") + raw.count(b"{") <= MAX_JSON_DEPTH:  # the common case costs two C scans
        return
    depth, in_string, escaped = 0, False, False
    for byte in raw:
        if in_string:  # brackets inside a string are text
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # closing quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in b"[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                raise JsonRefused(f"The request body nests deeper than {MAX_JSON_DEPTH} levels.")
        elif byte in b"]}":
            depth -= 1


def _refuse_lone_surrogates(value: Any) -> None:
    """A `\\ud800` escape with no partner decodes to a string no text column can hold: not text."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise JsonRefused("The request body holds a lone UTF-16 surrogate.") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _refuse_lone_surrogates(key)
            _refuse_lone_surrogates(item)
    elif isinstance(value, list):
        for item in value:
            _refuse_lone_surrogates(item)
