from __future__ import annotations

from collections.abc import Callable
from urllib.parse import unquote_plus

from django.conf import settings
from django.core.exceptions import SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse
from django.views import defaults

from apikit.exceptions import api_not_found, too_large


class NulPathMiddleware:
    """A path holding NUL is nobody's page: 404 before any view (and PostgreSQL) sees it; a page's
    admin page's query holding NUL is a 400.

    PostgreSQL refuses NUL in text with an error, so an id taken from such a path would turn
    a lookup into a 500 in every view that does one, the admin's included.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        api = request.path_info.startswith("/v1/")
        if "\x00" in request.path_info:
            return api_not_found(request) if api else defaults.page_not_found(request, Http404("No such page."))
        if request.path_info.startswith("/admin/") and "\x00" in unquote_plus(request.META.get("QUERY_STRING", "")):
            # The admin's list filters go to the database as they are (PostgreSQL refuses NUL with an error).
            return defaults.bad_request(request, SuspiciousOperation("NUL in the query string"))
        return self.get_response(request)


class BodyLimitMiddleware:
    """Every request's body against its limit, from Content-Length alone, before anything reads it
    (docs/api.md, "Body limits"): an upload (multipart) over REQUEST_MAX_UPLOAD_BYTES, any other body
    over REQUEST_MAX_BODY_BYTES, is answered 413 in the door's own shape: the contract's JSON under
    /v1/ and /webhooks/, a plain page in the portal.

    Without it a body over Django's DATA_UPLOAD_MAX_MEMORY_SIZE raised RequestDataTooBig wherever it
    was first read (a view, the CSRF check), a 500 in an API view and an HTML 400 in a webhook.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        upload = request.content_type == "multipart/form-data"
        limit = settings.REQUEST_MAX_UPLOAD_BYTES if upload else settings.REQUEST_MAX_BODY_BYTES
        if _content_length(request) > limit:
            return too_large(request, upload=upload)
        return self.get_response(request)


def _content_length(request: HttpRequest) -> int:
    try:
        return max(0, int(request.META.get("CONTENT_LENGTH") or 0))
    except ValueError:
        return 0  # Django reads no body without a length it understands
