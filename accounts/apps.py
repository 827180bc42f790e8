from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"

    def ready(self) -> None:
        from django.apps import apps
        from django.contrib.auth.signals import user_logged_in, user_login_failed

        # The admin's headings for django-otp's devices (its own names are OTP_TOTP and OTP_STATIC).
        apps.get_app_config("otp_totp").verbose_name = "Two-factor: authenticator apps"
        apps.get_app_config("otp_static").verbose_name = "Two-factor: recovery codes"

        from accounts import auditing, two_factor_views

        user_logged_in.connect(auditing.on_signed_in, dispatch_uid="audit_signed_in")
        user_logged_in.connect(two_factor_views.on_signed_in, dispatch_uid="proven_at_sign_in")
        user_login_failed.connect(auditing.on_sign_in_failed, dispatch_uid="audit_sign_in_failed")
