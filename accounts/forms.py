from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.forms import AuthenticationForm, PasswordResetForm
from django.core.exceptions import ValidationError

from accounts.throttle import WINDOW_SECONDS, login_attempt_allowed, login_succeeded


class SignupForm(forms.Form):
    EMAIL_TAKEN = "An account with this email already exists. Log in, or reset your password."

    email = forms.EmailField(label="Email", max_length=150, widget=forms.EmailInput(attrs={"autocomplete": "email"}))
    password = forms.CharField(
        label="Password",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        help_text=password_validation.password_validators_help_text_html(),
    )

    def clean_email(self) -> str:
        email = self.cleaned_data["email"].strip().lower()
        if get_user_model().objects.filter(username=email).exists():
            raise ValidationError(self.EMAIL_TAKEN)
        return email

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if "email" in data and "password" in data:
            user = get_user_model()(username=data["email"], email=data["email"])
            try:
                password_validation.validate_password(data["password"], user)
            except ValidationError as error:
                self.add_error("password", error)
        return data


class ThrottledAuthenticationForm(AuthenticationForm):
    """Refuses a username+address pair after repeated attempts (see accounts.throttle)."""

    def clean(self) -> dict[str, Any]:
        username = str(self.cleaned_data.get("username", ""))
        if self.cleaned_data.get("password") and not login_attempt_allowed(username=username, request=self.request):
            raise ValidationError(
                f"Too many failed log-in attempts. Wait {WINDOW_SECONDS // 60} minutes, or reset your password.",
                code="throttled",
            )
        data = super().clean()  # a wrong password raises here, and its attempt stays counted
        if self.get_user() is not None:
            login_succeeded(username=username, request=self.request)
        return data


class LoginForm(ThrottledAuthenticationForm):
    """The portal's log-in, by email."""

    username = forms.CharField(
        label="Email", max_length=254, widget=forms.EmailInput(attrs={"autofocus": True, "autocomplete": "email"})
    )

    def clean_username(self) -> str:
        return str(self.cleaned_data["username"]).strip().lower()


class AdminLoginForm(ThrottledAuthenticationForm, AdminAuthenticationForm):
    """The admin's log-in, under the same throttle: staff accounts are worth the most."""


class ApiKeyForm(forms.Form):
    name = forms.CharField(label="Key name", max_length=100, help_text="For example the app or server that uses it.")


class SiteUrlPasswordResetForm(PasswordResetForm):
    """The mailed link is built from SITE_URL, never from the request's Host header, which any client
    chooses (`Host: 127.0.0.1:1` made the link point at port 1)."""

    def send_mail(
        self,
        subject_template_name: str,
        email_template_name: str,
        context: dict[str, Any],
        from_email: str | None,
        to_email: str,
        html_email_template_name: str | None = None,
    ) -> None:
        site = urlsplit(settings.SITE_URL)
        context = {**context, "domain": site.netloc, "site_name": site.netloc, "protocol": site.scheme}
        super().send_mail(
            subject_template_name, email_template_name, context, from_email, to_email, html_email_template_name
        )
