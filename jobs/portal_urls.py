"""The portal's job pages (the API's job routes are in jobs/urls.py, under /v1/)."""

from django.urls import path

import jobs.converters  # noqa: F401  (registers <job_id:...>)
from jobs import views

urlpatterns = [
    path("jobs", views.job_list, name="jobs"),
    path("jobs/new", views.job_new, name="job-new"),
    path("jobs/new/preview", views.job_preview_card, name="job-preview"),
    path("jobs/<job_id:job_id>", views.job_detail, name="job"),
    path("jobs/<job_id:job_id>/progress", views.job_progress, name="job-progress"),
    path("jobs/<job_id:job_id>/download", views.job_download, name="job-download"),
    path("jobs/<job_id:job_id>/delete", views.job_delete_view, name="job-delete"),
]
