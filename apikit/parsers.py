from __future__ import annotations

import json
from collections.abc import Mapping
from typing import IO, Any

from django.conf import settings
from rest_framework.parsers import JSONParser

from apikit.exceptions import ApiError


class BoundedJSONParser(JSONParser):
    """JSON with a size cap: a body larger than the cap is refused before it is read whole.

    The cap is the view's `max_body_bytes` where it sets one (the batch call), else the setting.
    """

    def parse(
        self, stream: IO[Any], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        view = (parser_context or {}).get("view")
        limit = getattr(view, "max_body_bytes", None) or settings.API_MAX_JSON_BODY_BYTES
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise ApiError(413, "request_too_large", f"The request body is larger than {limit} bytes.")
        _refuse_deep_nesting(raw)
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise ApiError(400, "invalid_request", f"The request body is not valid JSON: {exc}.") from None
        if b"\\u" in raw:
            _refuse_lone_surrogates(data)
        return data


# No request of ours nests more than two levels; deeper JSON is an attack on the parser's recursion.
MAX_JSON_DEPTH = 32


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
                raise ApiError(400, "invalid_request", f"The request body nests deeper than {MAX_JSON_DEPTH} levels.")
        elif byte in b"]}":
            depth -= 1


def _refuse_lone_surrogates(value: Any) -> None:
    """A `\\ud800` escape with no partner decodes to a string no text column can hold: not text."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ApiError(400, "invalid_request", "The request body holds a lone UTF-16 surrogate.") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _refuse_lone_surrogates(key)
            _refuse_lone_surrogates(item)
    elif isinstance(value, list):
        for item in value:
            _refuse_lone_surrogates(item)
