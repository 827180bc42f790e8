"""The API reference at /v1/docs: drf-spectacular's ReDoc page, with nothing fetched from another host.

ReDoc's menu footer shows Redocly's logo from their CDN (https://cdn.redoc.ly), with no option to
turn it off (Redocly/redoc#2108). So the page does not load the bundle from the static files as it
ships: it loads it from `redoc_bundle`, which serves the same file with that one image address
replaced by an empty data: URL (the image then fails to decode and ReDoc hides it, leaving the
"API docs by Redocly" credit as text). tests/portal/test_browser.py fails if a new ReDoc asks any
other host for anything.
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import version
from pathlib import Path

from django.contrib.staticfiles import finders
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from drf_spectacular.views import SpectacularRedocView

BUNDLE = "drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js"
CDN_LOGO = b'src:"https://cdn.redoc.ly/redoc/logo-mini.svg"'
NO_IMAGE = b'src:"data:,"'


@cache
def bundle_bytes() -> bytes:
    """The sidecar's ReDoc with the CDN logo taken out, read once a process."""
    found = finders.find(BUNDLE)
    if not isinstance(found, str):
        raise FileNotFoundError(BUNDLE)
    return Path(found).read_bytes().replace(CDN_LOGO, NO_IMAGE)


def redoc_bundle(request: HttpRequest) -> HttpResponse:
    response = HttpResponse(bundle_bytes(), content_type="text/javascript; charset=utf-8")
    response["Cache-Control"] = "public, max-age=86400"  # the address names the version
    return response


class ApiReferenceView(SpectacularRedocView):
    @staticmethod
    def _redoc_standalone() -> str:
        return f"{reverse('api-docs-bundle')}?v={version('drf-spectacular-sidecar')}"
