"""The one error shape: {"error": {"code", "message", "param"}}, for every API error.

Domain code raises `lib.errors.DomainError`s, free of HTTP; here each gets its status (docs/api.md, "Errors").
"""

from __future__ import annotations

import functools
import logging
import math
import sys
from collections.abc import Callable
from typing import Any

from django.core.exceptions import DisallowedHost, RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.template import loader
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions
from rest_framework.response import Response

from lib.errors import DomainError
from lib.jsonbody import JSON_CONTENT_TYPE, render_json
from lib.outages import RETRY_AFTER_SECONDS, is_outage

logger = logging.getLogger(__name__)


# The HTTP status of each domain error code (docs/api.md, "Errors").
DOMAIN_STATUS = {
    "invalid_request": 400,
    "invalid_file": 400,
    "invalid_callback_url": 400,
    "deep_mode_disabled": 400,
    "insufficient_credits": 402,
    "key_spend_cap_reached": 402,
    "plan_upgrade_required": 403,
    "key_not_permitted": 403,
    "not_found": 404,
    "job_not_finished": 409,
    "export_not_ready": 409,
    "results_expired": 410,
    "export_expired": 410,
    "file_too_large": 413,
    "too_many_rows": 422,
    "too_many_deep_requests": 429,
    "address_objected": 451,
}


class ApiError(exceptions.APIException):
    """An error the contract names: raise it anywhere below an API view."""

    def __init__(
        self, status: int, code: str, message: str, param: str | None = None, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(detail=message, code=code)
        self.status_code = status
        self.error_code = code
        self.message = message
        self.param = param
        self.headers = headers or {}


def error_body(code: str, message: str, param: str | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "param": param}}


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    error = as_api_error(exc)
    if error.status_code >= 500:
        logger.exception("unhandled error in %s", context.get("view"), exc_info=exc)
    return Response(error_body(error.error_code, error.message, error.param), error.status_code, headers=error.headers)


def as_api_error(exc: Exception) -> ApiError:
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, DomainError):
        headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after is not None else None
        return ApiError(DOMAIN_STATUS[exc.code], exc.code, exc.message, exc.param, headers)
    if isinstance(exc, exceptions.ValidationError):
        param, message = _first_validation_error(exc.detail)
        return ApiError(400, "invalid_request", message, param)
    if isinstance(exc, RequestDataTooBig):
        return ApiError(413, "request_too_large", _TOO_LARGE)
    if isinstance(exc, exceptions.ParseError):
        return ApiError(400, "invalid_request", f"The request body could not be parsed: {exc.detail}")
    if isinstance(exc, exceptions.NotAuthenticated):
        return _unauthorized("authentication_required", "Send your API key as 'Authorization: Bearer <API_KEY>'.", "")
    if isinstance(exc, exceptions.AuthenticationFailed):
        return _unauthorized(
            "invalid_api_key", "The API key is unknown or has been revoked.", ', error="invalid_token"'
        )
    if isinstance(exc, (exceptions.NotFound, Http404)):
        return ApiError(404, "not_found", "No such resource.")
    if isinstance(exc, exceptions.MethodNotAllowed):
        return ApiError(405, "method_not_allowed", f"{exc.detail}")
    if isinstance(exc, exceptions.UnsupportedMediaType):
        return ApiError(415, "unsupported_media_type", f"{exc.detail}")
    if isinstance(exc, exceptions.NotAcceptable):
        return ApiError(406, "not_acceptable", "This endpoint only answers with application/json.")
    if isinstance(exc, exceptions.Throttled):
        wait = max(1, math.ceil(getattr(exc, "wait", None) or 1))
        return ApiError(
            429,
            "rate_limited",
            f"Too many requests for this key; retry in {wait} s.",
            headers={"Retry-After": str(wait)},
        )
    if isinstance(exc, exceptions.PermissionDenied):
        return ApiError(403, "forbidden", "You are not allowed to do this.")
    if is_outage(exc):
        return unavailable()
    return ApiError(500, "internal_error", "Something went wrong on our side. It has been logged.")


def unavailable() -> ApiError:
    """503: a service we depend on is unreachable (lib/outages.py). Nothing was charged or written."""
    return ApiError(
        503,
        "service_unavailable",
        f"The service is briefly unavailable; nothing was charged. Retry in {RETRY_AFTER_SECONDS} s.",
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
    )


def _unauthorized(code: str, message: str, challenge_extra: str) -> ApiError:
    return ApiError(401, code, message, headers={"WWW-Authenticate": f'Bearer realm="api"{challenge_extra}'})


def _first_validation_error(detail: Any, field: str | None = None) -> tuple[str | None, str]:
    if isinstance(detail, dict):
        name, inner = next(iter(detail.items()))
        param = None if name == "non_field_errors" else (f"{field}.{name}" if field else str(name))
        return _first_validation_error(inner, param)
    if isinstance(detail, list) and detail:
        return _first_validation_error(detail[0], field)
    message = str(detail)
    return field, f"{field}: {message}" if field else message


def json_error(status: int, code: str, message: str, param: str | None = None) -> HttpResponse:
    return HttpResponse(render_json(error_body(code, message, param)), status=status, content_type=JSON_CONTENT_TYPE)


# The API's plain Django views are csrf_exempt, as DRF's are: the API authenticates by a bearer key,
# never by a cookie, and Django's check would refuse a POST with its HTML page, not the error shape.
@csrf_exempt
def api_not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    return json_error(404, "not_found", f"No such endpoint: {request.method} {request.path}.")


def reads_only[V: Callable[..., HttpResponseBase]](view: V) -> V:
    """A page under /v1/ that only reads (the API reference): any other method is the contract's 405."""

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if request.method in _READS:
            return view(request, *args, **kwargs)
        response = json_error(405, "method_not_allowed", f'Method "{request.method}" not allowed.')
        response["Allow"] = ", ".join(_READS)
        return response

    return csrf_exempt(wrapped)  # type: ignore[return-value]


_READS = ("GET", "HEAD", "OPTIONS")


_TOO_LARGE = "The request body is larger than this endpoint takes (docs/api.md, Body limits)."
# Doors that answer in the contract's JSON: the API, and the sending services' and Stripe's webhooks.
_JSON_DOORS = ("/v1/", "/webhooks/")


def too_large(request: HttpRequest, *, upload: bool = False) -> HttpResponse:
    """413 in the door's shape: file_too_large for an API upload, request_too_large for any other body
    under /v1/ or /webhooks/, a plain page in the portal."""
    if not request.path.startswith(_JSON_DOORS):
        return HttpResponse(loader.get_template("413.html").render(), status=413)
    if upload and request.path.startswith("/v1/"):
        return json_error(413, "file_too_large", "The file is larger than 25 MB.", "file")
    return json_error(413, "request_too_large", _TOO_LARGE)


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler400 (a disallowed Host, too many fields and Django's other SuspiciousOperations): the
    contract's JSON under /v1/, Django's plain page elsewhere. The message never echoes the input.
    A form field over DATA_UPLOAD_MAX_MEMORY_SIZE is a 413, in the door's shape."""
    if isinstance(exception, RequestDataTooBig):
        return too_large(request)
    if not request.path.startswith("/v1/"):
        return defaults.bad_request(request, exception)
    if isinstance(exception, DisallowedHost):
        return json_error(400, "invalid_request", "The Host header names no site this service answers for.")
    return json_error(400, "invalid_request", "The request is malformed.")


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: the contract's JSON under /v1/, Django's plain page elsewhere; 503 for an
    outage (lib/outages.py) raised outside a view (in a middleware: sessions, keys, throttles).
    Django calls it while handling the exception, so sys.exc_info() holds it."""
    if is_outage(sys.exc_info()[1]):
        return _unavailable_response(request)
    if request.path.startswith("/v1/"):
        return json_error(500, "internal_error", "Something went wrong on our side. It has been logged.")
    return defaults.server_error(request)


def _unavailable_response(request: HttpRequest) -> HttpResponse:
    if request.path.startswith("/v1/"):
        error = unavailable()
        response = json_error(503, error.error_code, error.message)
    else:  # a page renders nothing that could need the database or the cache
        response = HttpResponse(loader.get_template("503.html").render(), status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response
