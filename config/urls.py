from csp.decorators import csp_update
from django.contrib import admin
from django.templatetags.static import static
from django.urls import URLPattern, URLResolver, include, path, re_path
from django.utils.functional import lazy
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularJSONAPIView

import verification.converters  # noqa: F401  (registers <verification_id:...>)
from accounts.apis import AccountApi, KeyApi, KeyListApi
from apikit.api_reference import ApiReferenceView, redoc_bundle
from apikit.exceptions import api_not_found, reads_only
from ops.dashboard import dashboard
from verification import views as verification_views

# What ReDoc needs beyond the site's policy, no other host among it (its CDN logo is taken out in
# apikit/api_reference.py): its search index runs in a worker made from a blob: URL, and two styles
# it injects before it can nonce them (perfect-scrollbar's CSS and an empty <style>) are allowed by
# hash. A new ReDoc (drf-spectacular-sidecar) may change them: tests/portal/test_browser.py fails on
# any violation and on any request to another origin.
REDOC_CSP = {
    "worker-src": ["blob:"],
    "style-src": [
        "'sha256-QMIg+bpjm3JdElJ388KYke01izlUW0UoNOeKjpMxdgc='",
        "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='",
    ],
}

api_v1: list[URLPattern | URLResolver] = [
    path("", include("verification.urls")),
    path("", include("jobs.urls")),
    path("", include("feedback.urls")),
    path("", include("privacy.urls")),
    path("account", AccountApi.as_view(), name="api-account"),
    path("keys", KeyListApi.as_view(), name="api-keys"),
    path("keys/<int:key_id>", KeyApi.as_view(), name="api-key"),
    path("openapi.json", SpectacularJSONAPIView.as_view(), name="openapi-schema"),
    path(
        "docs",
        reads_only(csp_update(REDOC_CSP)(ApiReferenceView.as_view(url_name="openapi-schema"))),
        name="api-docs",
    ),
    path("docs/redoc.standalone.js", reads_only(redoc_bundle), name="api-docs-bundle"),
    re_path(r"^[\s\S]*$", api_not_found, name="api-not-found"),  # not ".*": a path may hold a newline (%0A) too
]

urlpatterns = [
    path("", include("ops.urls")),
    # Browsers ask for /favicon.ico on every page that names none: the portal's, the admin's, the API reference.
    path("favicon.ico", RedirectView.as_view(url=lazy(static, str)("favicon.svg"), permanent=True), name="favicon"),
    path("admin/dashboard/", dashboard, name="admin-dashboard"),  # before the admin's catch-all
    path("admin/", admin.site.urls),
    path("v1/", include(api_v1)),
    # The customer portal: server-rendered pages, session log-in.
    path("", include("portal.urls")),
    path("", include("accounts.urls")),
    path("", include("billing.urls")),
    path("", include("feedback.portal_urls")),
    path("verify", verification_views.verify, name="verify"),
    path(
        "verify/<verification_id:verification_id>",
        verification_views.verification_resolution,
        name="verification-resolution",
    ),
    path("", include("jobs.portal_urls")),
    path("", include("privacy.portal_urls")),
]

handler400 = "apikit.exceptions.bad_request"
handler500 = "apikit.exceptions.server_error"
