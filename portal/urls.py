from __future__ import annotations

from django.urls import path

from portal import views, widget

urlpatterns = [
    path("", views.landing, name="landing"),
    path("signup", views.signup, name="signup"),
    path("signup/confirm/resend", views.signup_confirm_resend, name="signup-confirm-resend"),
    path("signup/confirm/<str:token>", views.signup_confirm, name="signup-confirm"),
    path("dashboard", views.dashboard, name="dashboard"),
    path("widget/verifier-form.js", widget.widget_stable, name="widget"),
    path("widget/verifier-form.<str:version>.js", widget.widget_versioned, name="widget-versioned"),
    path("keys/widget-demo", widget.widget_demo, name="widget-demo"),
]
