from __future__ import annotations

import re
import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from lib import logs, metrics
from lib.tokens import random_base62

_SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")


class RequestIdMiddleware:
    """Tag every request with an id (the client's, if sane) and note when it started."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request.started_at = time.perf_counter()  # type: ignore[attr-defined]
        sent = request.headers.get("X-Request-Id", "")
        request_id = sent if _SANE_REQUEST_ID.fullmatch(sent) else "req_" + random_base62(20)
        request.request_id = request_id  # type: ignore[attr-defined]
        logs.clear()
        logs.bind(request_id=request_id)
        response = self.get_response(request)
        response["X-Request-Id"] = request_id
        return response


class ObserveMiddleware:
    """Each request counted and timed per view (/metrics) and, with LOG_FORMAT=json, logged as one line."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        seconds = time.perf_counter() - started
        match = request.resolver_match
        view = match.view_name if match is not None else "unmatched"
        method, status = request.method or "", response.status_code
        metrics.request_counted(view=view, method=method, status=status, seconds=seconds)
        account_id = getattr(getattr(getattr(request, "user", None), "account", None), "pk", None)
        logs.request_logged(
            method=method, path=request.path, view=view, status=status, seconds=seconds, account_id=account_id
        )
        return response
