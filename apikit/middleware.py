from __future__ import annotations

from collections.abc import Callable
from urllib.parse import unquote_plus

from django.core.exceptions import SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse
from django.views import defaults

from apikit.exceptions import api_not_found


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
