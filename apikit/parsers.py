from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any

from django.conf import settings
from rest_framework.parsers import JSONParser

from apikit.exceptions import ApiError
from lib.jsonbody import json_parsed


class BoundedJSONParser(JSONParser):
    """JSON with a size cap: a body larger than the cap is refused before it is read whole; JSON nested
    deeper than lib.jsonbody.MAX_JSON_DEPTH or holding a lone surrogate is refused (lib/jsonbody.py).

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
        return json_parsed(raw)
