from django.urls import path

import jobs.converters  # noqa: F401  (registers <job_id:...>)
from jobs.apis import BulkPreviewApi, BulkSubmitApi, JobDetailApi, JobListApi, JobResultsApi, result_download

urlpatterns = [
    path("verify/bulk", BulkSubmitApi.as_view(), name="api-verify-bulk"),
    path("verify/bulk/preview", BulkPreviewApi.as_view(), name="api-verify-bulk-preview"),
    path("jobs", JobListApi.as_view(), name="api-jobs"),
    path("jobs/<job_id:job_id>", JobDetailApi.as_view(), name="api-job"),
    path("jobs/<job_id:job_id>/results", JobResultsApi.as_view(), name="api-job-results"),
    path("results/<str:token>", result_download, name="job-result-download"),
]
