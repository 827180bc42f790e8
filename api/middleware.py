from __future__ import annotations

from collections.abc import Callable

from django.http import Http404, HttpRequest, HttpResponse
from django.views import defaults

from api.exceptions import api_not_found


class NulPathMiddleware:
    """A path holding NUL is nobody's page: 404 before any view (and PostgreSQL) sees it.

    PostgreSQL refuses NUL in text with an error, so an id taken from such a path would turn
    a lookup into a 500 in every view that does one, the admin's included.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if "\x00" not in request.path_info:
            return self.get_response(request)
        if request.path_info.startswith("/v1/"):
            return api_not_found(request)
        return defaults.page_not_found(request, Http404("No such page."))
