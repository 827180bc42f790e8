"""CORS for publishable keys (docs/widget.md, "CORS"): the one endpoint a web page may call.

A browser asks first (`OPTIONS` with `Access-Control-Request-Method`), without the key: the
preflight is answered 204 for an origin that some active publishable key allows, else 403 in
the error shape. The request itself is judged with its key (apikit/permissions.py), which marks
the origin here once it passes; only then does the answer carry `Access-Control-Allow-Origin`.
Which origins pass, for a request or a preflight, is decided in accounts/origins.py.
Never `Access-Control-Allow-Credentials`: the key is the credential, not a cookie.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_vary_headers

from accounts.origins import some_key_allows
from apikit.exceptions import json_error

CORS_PATHS = frozenset({"/v1/verify"})
ALLOWED_HEADERS = "Authorization, Content-Type, Idempotency-Key"
MAX_AGE_SECONDS = 600
_ORIGIN_MARK = "cors_origin"


def allow_origin(request: HttpRequest, origin: str) -> None:
    setattr(request, _ORIGIN_MARK, origin)


class CorsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info not in CORS_PATHS:
            return self.get_response(request)
        origin = request.headers.get("Origin")
        if request.method == "OPTIONS" and origin and "Access-Control-Request-Method" in request.headers:
            response = _preflight(origin)
        else:
            response = self.get_response(request)
            allowed = getattr(request, _ORIGIN_MARK, None)
            if allowed:
                response["Access-Control-Allow-Origin"] = allowed
        patch_vary_headers(response, ["Origin"])
        return response


def _preflight(origin: str) -> HttpResponse:
    if not some_key_allows(origin):
        return json_error(403, "key_not_permitted", "No publishable key may be used from this origin.")
    response = HttpResponse(status=204)
    response["Access-Control-Allow-Origin"] = origin
    response["Access-Control-Allow-Methods"] = "POST"
    response["Access-Control-Allow-Headers"] = ALLOWED_HEADERS
    response["Access-Control-Max-Age"] = str(MAX_AGE_SECONDS)
    return response
