from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from lib.renderers import JSON_CONTENT_TYPE, render_json
from ops import probes


def _json(body: object, status: int = 200) -> HttpResponse:
    return HttpResponse(render_json(body), status=status, content_type=JSON_CONTENT_TYPE)


@never_cache
@require_safe
def healthz(request: HttpRequest) -> HttpResponse:
    return _json({"status": "ok"})


@never_cache
@require_safe
def readyz(request: HttpRequest) -> HttpResponse:
    checks = probes.readiness()
    ready = all(result == probes.OK for result in checks.values())
    return _json({"status": "ok" if ready else "unavailable", "checks": checks}, 200 if ready else 503)
