from __future__ import annotations

import hmac

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_safe
from prometheus_client import CONTENT_TYPE_PLAIN_0_0_4

from apikit.exceptions import api_not_found, json_error
from lib.jsonbody import JSON_CONTENT_TYPE, render_json
from ops import metrics as ops_metrics
from ops import probes


def _json(body: object, status: int = 200) -> HttpResponse:
    return HttpResponse(render_json(body), status=status, content_type=JSON_CONTENT_TYPE)


@never_cache
@csrf_exempt  # a monitor sends no cookie: a write is require_safe's 405, not the CSRF page's 403
@require_safe
def healthz(request: HttpRequest) -> HttpResponse:
    return _json({"status": "ok"})


@never_cache
@csrf_exempt
@require_safe
def readyz(request: HttpRequest) -> HttpResponse:
    checks = probes.readiness()
    ready = all(result == probes.OK for result in checks.values())
    body: dict[str, object] = {"status": "ok" if ready else "unavailable", "checks": checks}
    if settings.VERIFIER_DEEP_MODE:  # a detail, not a check: the service serves whatever it says
        body["egresses"] = probes.run_detail(probes.egresses)
    return _json(body, 200 if ready else 503)


@never_cache
@csrf_exempt
@require_safe
def metrics(request: HttpRequest) -> HttpResponse:
    token = settings.METRICS_TOKEN
    if not token:
        return api_not_found(request)
    sent = request.headers.get("Authorization", "")
    # surrogatepass: a header is any text, lone surrogates included, and must never make this a 500.
    if not hmac.compare_digest(sent.encode(errors="surrogatepass"), f"Bearer {token}".encode()):
        response = json_error(401, "authentication_required", "Send 'Authorization: Bearer <METRICS_TOKEN>'.")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(ops_metrics.exposition(), content_type=CONTENT_TYPE_PLAIN_0_0_4)
