from django.urls import path

from privacy import views

urlpatterns = [
    path("settings/privacy", views.privacy_page, name="privacy"),
    path("settings/privacy/retention", views.retention_default, name="privacy-retention"),
    path("settings/privacy/region", views.probe_region, name="privacy-region"),
]
