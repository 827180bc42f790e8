from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from urllib.parse import urlsplit

from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.forms import AuthenticationForm, PasswordResetForm
from django.core.exceptions import ValidationError
from django.http import HttpRequest
from django.utils import timezone

from accounts.key_limits import networks_normalised
from accounts.login_throttle import (
    PASSWORD_RESETS_PER_EMAIL,
    WINDOW_SECONDS,
    address_allowed,
    attempt_allowed,
    login_attempt_allowed,
    login_succeeded,
)
from accounts.models import ApiKey, KeyMode, Role
from lib import outbound
from lib.errors import DomainError
from lib.text import PlainTextForm


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
    """Refuses a username+address pair after repeated attempts (see accounts.login_throttle)."""

    def clean(self) -> dict[str, Any]:
        username = str(self.cleaned_data.get("username", ""))
        if self.cleaned_data.get("password") and not address_allowed("login", self.request):
            raise ValidationError("Too many log-in attempts from your address. Wait 15 minutes.", code="throttled")
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
    """The admin's log-in, under the same throttle: staff accounts are worth the most. Staff sign in by
    email as customers do (their login is their address: accounts/management/commands/createsuperuser.py)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["username"].label = "Email"


class ApiKeyForm(PlainTextForm, forms.Form):
    # Secret or publishable decides which of the fields after it apply, so it comes right after the name.
    field_order = ["name", "kind", "mode"]

    name = forms.CharField(label="Key name", max_length=100, help_text="For example the app or server that uses it.")
    mode = forms.ChoiceField(
        label="Live or test",
        choices=[(KeyMode.LIVE, "Live (real checks, costs credits)"), (KeyMode.TEST, "Test (sandbox answers, free)")],
        initial=KeyMode.LIVE,
        required=False,  # a live key unless asked
    )

    def clean_mode(self) -> str:
        return str(self.cleaned_data.get("mode") or KeyMode.LIVE)

    scope = forms.ChoiceField(
        label="Scope", choices=ApiKey.Scope.choices, required=False, help_text="What the key may do (default: full)."
    )
    expires_on = forms.DateField(
        label="Valid until",
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text="Optional: the key is refused after this day ends (UTC).",
    )
    allowed_ips = forms.CharField(
        label="Allowed addresses",
        required=False,
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": "203.0.113.0/24"}),
        help_text="Optional: addresses or networks (CIDR) it may be used from, one a line. Empty: anywhere.",
    )

    def clean_scope(self) -> str:
        return str(self.cleaned_data["scope"] or ApiKey.Scope.FULL)

    def clean_expires_on(self) -> date | None:
        day: date | None = self.cleaned_data["expires_on"]
        if day is not None and day < timezone.now().date():
            raise ValidationError("Choose today or a later day.")
        return day

    def clean_allowed_ips(self) -> str:
        try:
            return networks_normalised(self.cleaned_data["allowed_ips"].splitlines())
        except DomainError as error:
            raise ValidationError(error.message) from None

    kind = forms.ChoiceField(
        label="Secret or publishable",
        choices=ApiKey.Kind.choices,
        initial=ApiKey.Kind.SECRET,
        required=False,
        help_text="Publishable keys go in web pages (the form widget): verify only, from the origins below.",
    )
    allowed_origins = forms.CharField(
        label="Allowed origins",
        required=False,
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": "https://shop.example.com"}),
        help_text="Publishable keys: the sites that may use it, one a line; https://*.example.com for any one "
        "subdomain.",
    )
    daily_cap = forms.IntegerField(
        label="Daily cap",
        required=False,
        min_value=0,
        help_text="Credits a UTC day (publishable keys: 1,000 unless set).",
    )
    monthly_cap = forms.IntegerField(label="Monthly cap", required=False, min_value=0, help_text="Credits a month.")

    def clean_kind(self) -> str:
        return str(self.cleaned_data.get("kind") or ApiKey.Kind.SECRET)

    def limits(self) -> dict[str, Any]:
        """The key's scope, expiry, allow-list, origins and caps, as `accounts.keys.key_create` takes them."""
        day = self.cleaned_data["expires_on"]
        expires_at = datetime.combine(day + timedelta(days=1), time.min, tzinfo=UTC) if day else None
        caps = {name: self.cleaned_data[name] for name in ("daily_cap", "monthly_cap")}
        if self.cleaned_data["kind"] == ApiKey.Kind.PUBLISHABLE and caps["daily_cap"] is None:
            del caps["daily_cap"]  # the publishable default
        return {
            "kind": self.cleaned_data["kind"],
            "scope": self.cleaned_data["scope"] if self.cleaned_data["kind"] == ApiKey.Kind.SECRET else None,
            "expires_at": expires_at,
            "allowed_ips": self.cleaned_data["allowed_ips"],
            "allowed_origins": self.cleaned_data["allowed_origins"].split(),
            "caps": caps,
        }


class RoleForm(forms.Form):
    role = forms.ChoiceField(label="Role", choices=Role.choices)


class SwitchAccountForm(forms.Form):
    account = forms.UUIDField(widget=forms.HiddenInput)


class InviteForm(forms.Form):
    email = forms.EmailField(label="Email", max_length=150)
    role = forms.ChoiceField(label="Role", choices=Role.choices, initial=Role.VIEWER)


class NewMemberForm(forms.Form):
    """An invited person without a login chooses a password (the address is the invitation's)."""

    password = SignupForm.base_fields["password"]

    def __init__(self, *args: Any, email: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.email = email

    def clean_password(self) -> str:
        password = str(self.cleaned_data["password"])
        password_validation.validate_password(password, get_user_model()(username=self.email, email=self.email))
        return password


class CodeForm(forms.Form):
    code = forms.CharField(
        label="Code",
        max_length=20,
        help_text="The 6 digits your authenticator app shows, or one of your recovery codes.",
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "inputmode": "numeric", "autofocus": True}),
    )


class ReaskForm(forms.Form):
    password_or_code = forms.CharField(
        label="Password or code",
        strip=False,
        widget=forms.PasswordInput(attrs={"autofocus": True, "autocomplete": "current-password"}),
        help_text="Your password, or a code from your authenticator app.",
    )


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


class ThrottledPasswordResetForm(SiteUrlPasswordResetForm):
    """Django's reset form, at most 3 mails an hour to one address and 10 requests an hour from one
    client address; over either the form says so (whether or not the address has an account)."""

    request: HttpRequest | None = None

    def clean_email(self) -> str:
        email = str(self.cleaned_data["email"]).strip().lower()
        limit, window = PASSWORD_RESETS_PER_EMAIL
        per_address = address_allowed("password-reset", self.request)
        if not (per_address and attempt_allowed(scope="password-reset", key=email, limit=limit, window_seconds=window)):
            raise ValidationError("Too many reset requests: wait an hour, or look for the mail we sent.")
        return email


class KeyLimitsForm(PlainTextForm, forms.Form):
    """A key's name, spend caps and (publishable keys) allowed origins, changed on the keys page."""

    name = forms.CharField(label="Key name", max_length=100)
    daily_cap = forms.IntegerField(label="Daily cap", required=False, min_value=0, help_text="Credits a UTC day.")
    monthly_cap = forms.IntegerField(label="Monthly cap", required=False, min_value=0, help_text="Credits a month.")
    allowed_origins = forms.CharField(
        label="Allowed origins",
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="The sites that may use this publishable key, one a line.",
    )

    def __init__(self, data: Any = None, *, key: ApiKey) -> None:
        initial = {"name": key.name, "daily_cap": key.daily_cap, "monthly_cap": key.monthly_cap}
        super().__init__(data, initial=initial | {"allowed_origins": "\n".join(key.origin_list())})
        if not key.is_publishable:
            del self.fields["allowed_origins"]

    def changes(self) -> dict[str, Any]:
        """As `accounts.keys.KeyChange` takes them."""
        values = dict(self.cleaned_data)
        if "allowed_origins" in values:
            values["allowed_origins"] = values["allowed_origins"].split()
        return values


class CallbackUrlForm(forms.Form):
    callback_url = forms.CharField(
        label="Callback URL",
        required=False,
        max_length=outbound.MAX_CALLBACK_URL,
        help_text="Where we send a verification.resolved event when a request names no callback_url.",
    )

    def clean_callback_url(self) -> str:
        try:
            return outbound.callback_url_checked(self.cleaned_data["callback_url"].strip())
        except outbound.UnsafeUrl as error:
            raise ValidationError(str(error)) from None
