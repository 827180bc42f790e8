from django.urls import path

import privacy.converters  # noqa: F401  (registers <export_id:...>)
from privacy import views

urlpatterns = [
    path("settings/privacy", views.privacy_page, name="privacy"),
    path("settings/privacy/retention", views.retention_default, name="privacy-retention"),
    path("settings/privacy/region", views.probe_region, name="privacy-region"),
    path("settings/privacy/export", views.export_ask, name="privacy-export"),
    path(
        "settings/privacy/exports/<export_id:export_id>/download", views.export_download, name="privacy-export-download"
    ),
]
