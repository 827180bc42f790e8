"""The service's URLs plus ``POST /v1/_floor``: authenticated, throttled, and doing nothing.

Only ``bench.settings`` routes here: production code has no floor endpoint. It measures
what the framework costs (auth, rate limit, parser, renderer, middleware) before any work.
"""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, include, path
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.permissions import Action
from apikit.views import AccountAPIView
from config.urls import urlpatterns as service_urlpatterns


class FloorApi(AccountAPIView):
    permission = {"POST": Action.VERIFY}  # the verify endpoint's: the same key checks before no work

    def post(self, request: Request) -> Response:
        return Response({})


urlpatterns: list[URLPattern | URLResolver] = [
    path("v1/_floor", FloorApi.as_view(), name="bench-floor"),
    path("", include(service_urlpatterns)),
]

handler500 = "apikit.exceptions.server_error"
