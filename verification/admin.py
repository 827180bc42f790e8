from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from accounts.models import Account
from lib.address_keys import address_key
from lib.admin import AddressKeySearch, ReadOnlyAdmin
from verification.models import (
    CachedVerdict,
    CatchAllAnswer,
    DomainRecord,
    MailboxAnswer,
    Objection,
    RetriedVerification,
)


@admin.register(CachedVerdict)
class CachedVerdictAdmin(ReadOnlyAdmin):
    list_display = ["email", "account", "validation_mode", "status", "created_at", "expires_at"]
    list_filter = ["status", "validation_mode"]
    list_select_related = [f"account__{related}" for related in Account.DISPLAY_RELATED]
    search_fields = ["email", f"account__{Account.EMAIL_LOOKUP}"]


@admin.register(DomainRecord)
class DomainRecordAdmin(ReadOnlyAdmin):
    list_display = ["domain", "status", "mx_hosts", "resolved_at", "expires_at"]
    list_filter = ["status"]
    search_fields = ["domain"]


@admin.register(MailboxAnswer)
class MailboxAnswerAdmin(AddressKeySearch, ReadOnlyAdmin):
    """Deep mode's shared answers: what a mail server said of a mailbox, whoever asked (docs/deep.md)."""

    list_display = ["address_key", "meaning", "code", "text", "asked_at", "expires_at"]
    list_filter = ["meaning"]


@admin.register(CatchAllAnswer)
class CatchAllAnswerAdmin(ReadOnlyAdmin):
    list_display = ["domain", "accepts_any", "asked_at", "expires_at"]
    list_filter = ["accepts_any"]
    search_fields = ["domain"]


@admin.register(RetriedVerification)
class RetriedVerificationAdmin(ReadOnlyAdmin):
    """Deep answers `unknown` for a temporary reason, asked again later (docs/deep.md)."""

    list_display = ["id", "account", "state", "attempts", "next_attempt_at", "charged", "created_at"]
    list_filter = ["state", "charged"]
    list_select_related = [f"account__{related}" for related in Account.DISPLAY_RELATED]
    search_fields = ["id", f"account__{Account.EMAIL_LOOKUP}"]


class ObjectionForm(forms.ModelForm):
    email = forms.CharField(max_length=1000, help_text="The whole address. Only its HMAC is stored, never the address.")

    class Meta:
        model = Objection
        fields: list[str] = []

    def clean_email(self) -> str:
        email = self.cleaned_data["email"]
        if Objection.objects.filter(address_key=address_key(email)).exists():
            raise forms.ValidationError("An objection to this address is already recorded.")
        return email


@admin.register(Objection)
class ObjectionAdmin(AddressKeySearch, admin.ModelAdmin):
    """A person's objection to their address being verified (docs/privacy.md, "Objection"): recorded
    here with who and when, withdrawn by deleting it; never edited."""

    form = ObjectionForm
    list_display = ["address_key", "recorded_by_email", "recorded_at"]

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return ["email"] if obj is None else ["address_key", "recorded_by_email", "recorded_at"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [] if obj is None else ["address_key", "recorded_by_email", "recorded_at"]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: Any, obj: Objection, form: Any, change: bool) -> None:
        obj.address_key = address_key(form.cleaned_data["email"])
        obj.recorded_by, obj.recorded_by_email = request.user, request.user.email
        super().save_model(request, obj, form, change)
