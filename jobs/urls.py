from django.urls import path

import jobs.converters  # noqa: F401  (registers <job_id:...>)
from jobs.apis import BulkSubmitApi, JobDetailApi, JobListApi
from jobs.downloads import result_download
from jobs.result_apis import BulkPreviewApi, JobResultsApi

urlpatterns = [
    path("verify/bulk", BulkSubmitApi.as_view(), name="api-verify-bulk"),
    path("verify/bulk/preview", BulkPreviewApi.as_view(), name="api-verify-bulk-preview"),
    path("jobs", JobListApi.as_view(), name="api-jobs"),
    path("jobs/<job_id:job_id>", JobDetailApi.as_view(), name="api-job"),
    path("jobs/<job_id:job_id>/results", JobResultsApi.as_view(), name="api-job-results"),
    path("results/<str:token>", result_download, name="job-result-download"),
]
