from django.urls import path

import privacy.converters  # noqa: F401  (registers <export_id:...>)
from privacy.apis import ErasureApi
from privacy.export_apis import ExportApi, ExportDetailApi, ExportDownloadApi, export_link_download

urlpatterns = [
    path("privacy/erasures", ErasureApi.as_view(), name="api-privacy-erasures"),
    path("account/export", ExportApi.as_view(), name="api-account-export"),
    path("account/export/<export_id:export_id>", ExportDetailApi.as_view(), name="api-account-export-detail"),
    path(
        "account/export/<export_id:export_id>/download",
        ExportDownloadApi.as_view(),
        name="api-account-export-download",
    ),
    path("account/export/link/<str:token>", export_link_download, name="account-export-link"),
]
