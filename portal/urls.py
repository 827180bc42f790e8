from __future__ import annotations

from django.urls import path

from portal import views

urlpatterns = [
    path("", views.landing, name="landing"),
    path("signup", views.signup, name="signup"),
    path("signup/confirm/resend", views.signup_confirm_resend, name="signup-confirm-resend"),
    path("signup/confirm/<str:token>", views.signup_confirm, name="signup-confirm"),
    path("dashboard", views.dashboard, name="dashboard"),
]
