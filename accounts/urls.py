from __future__ import annotations

from typing import Any

from django.contrib.auth import views as auth_views
from django.urls import path
from django.views.generic.base import View

from accounts import invitation_views, key_views, member_views, two_factor_views, views, widget

# Django's own password views, at our addresses and with our templates (accounts/<template>.html).
PASSWORD_PAGES: list[tuple[str, type[View[Any]], str, str]] = [
    # (route, view, URL name, template)
    ("password/change", auth_views.PasswordChangeView, "password_change", "password_change"),
    ("password/change/done", auth_views.PasswordChangeDoneView, "password_change_done", "password_change_done"),
    ("password/reset", views.PasswordResetView, "password_reset", "password_reset"),
    ("password/reset/sent", auth_views.PasswordResetDoneView, "password_reset_done", "password_reset_sent"),
    (
        "password/reset/<uidb64>/<token>",
        auth_views.PasswordResetConfirmView,
        "password_reset_confirm",
        "password_reset_confirm",
    ),
    ("password/reset/done", auth_views.PasswordResetCompleteView, "password_reset_complete", "password_reset_complete"),
]

urlpatterns = [
    path("login", views.LoginView.as_view(), name="login"),
    path("login/code", two_factor_views.login_code, name="login-code"),
    path("login/again", two_factor_views.reask, name="reask"),
    path("settings/security", two_factor_views.security, name="security"),
    path("logout", auth_views.LogoutView.as_view(), name="logout"),
    *(
        path(route, view.as_view(template_name=f"accounts/{template}.html"), name=name)
        for route, view, name, template in PASSWORD_PAGES
    ),
    path("account/switch", views.account_switch, name="account-switch"),
    path("members", member_views.members, name="members"),
    path("members/invite", member_views.member_invite, name="member-invite"),
    path("members/require-2fa", views.require_two_factor, name="require-2fa"),
    path("invitations/<str:token>", member_views.invitation, name="invitation"),
    path("members/<int:member_id>/role", member_views.member_role, name="member-role"),
    path("members/<int:member_id>/remove", member_views.member_remove_view, name="member-remove"),
    path(
        "members/invitations/<int:invitation_id>/revoke", invitation_views.invitation_revoke, name="invitation-revoke"
    ),
    path(
        "members/invitations/<int:invitation_id>/resend", invitation_views.invitation_resend, name="invitation-resend"
    ),
    path("settings/audit", views.audit_log, name="audit"),
    path("keys", key_views.keys, name="keys"),
    path("keys/<int:key_id>/revoke", key_views.key_revoke, name="key-revoke"),
    path("keys/<int:key_id>/edit", key_views.key_edit, name="key-edit"),
    path("keys/widget-demo", widget.widget_demo, name="widget-demo"),
    path("widget/verifier-form.js", widget.widget_stable, name="widget"),
    path("widget/verifier-form.<str:version>.js", widget.widget_versioned, name="widget-versioned"),
    path("settings/signing-secret", key_views.signing_secret, name="signing-secret"),
    path("settings/signing-secret/rotate", key_views.signing_secret_rotate, name="signing-secret-rotate"),
]
