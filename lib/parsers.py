from __future__ import annotations

import json
from collections.abc import Mapping
from typing import IO, Any

from django.conf import settings
from rest_framework.parsers import JSONParser

from lib.errors import ApiError


class BoundedJSONParser(JSONParser):
    """JSON with a size cap: a body larger than the cap is refused before it is read whole."""

    def parse(
        self, stream: IO[Any], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        limit = settings.API_MAX_JSON_BODY_BYTES
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise ApiError(413, "request_too_large", f"The request body is larger than {limit} bytes.")
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise ApiError(400, "invalid_request", f"The request body is not valid JSON: {exc}.") from None
