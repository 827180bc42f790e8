from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView

from lib.errors import api_not_found

api_v1 = [
    path("", include("verification.urls")),
    path("", include("jobs.urls")),
    path("openapi.json", SpectacularAPIView.as_view(), name="openapi-schema"),
    path("docs", SpectacularRedocView.as_view(url_name="openapi-schema"), name="api-docs"),
    re_path(r"^.*$", api_not_found),
]

urlpatterns = [
    path("admin/", admin.site.urls),
    path("v1/", include(api_v1)),
]

handler500 = "lib.errors.server_error"
