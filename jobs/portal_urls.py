"""The portal's job pages (the API's job routes are in jobs/urls.py, under /v1/)."""

from django.urls import path

from jobs import views

urlpatterns = [
    path("jobs", views.job_list, name="jobs"),
    path("jobs/new", views.job_new, name="job-new"),
    path("jobs/<str:job_id>", views.job_detail, name="job"),
    path("jobs/<str:job_id>/progress", views.job_progress, name="job-progress"),
    path("jobs/<str:job_id>/download", views.job_download, name="job-download"),
]
