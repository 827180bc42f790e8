"""Staff erase a person (a data subject asking the operator) from everything (docs/privacy.md)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from lib.address_keys import address_key
from lib.admin import AddressKeySearch
from privacy.erasure import erasure_for_person
from privacy.models import PersonErasure


class PersonErasureForm(forms.ModelForm):
    email = forms.CharField(max_length=1000, help_text="The whole address. It is erased, and not kept here either.")

    class Meta:
        model = PersonErasure
        fields = ["reason"]


@admin.register(PersonErasure)
class PersonErasureAdmin(AddressKeySearch, admin.ModelAdmin):
    """Add: erase now, from every account and the shared stores, recorded with the staff member and
    the reason. The record is never changed or deleted (the prune leaves it: no expiry)."""

    form = PersonErasureForm
    list_display = ["erased_at", "erased_by_email", "reason", "erased"]
    shown = ["address_key", "reason", "erased_by_email", "erased", "erased_at"]

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return ["email", "reason"] if obj is None else self.shown

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return [] if obj is None else self.shown

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: Any, obj: PersonErasure, form: Any, change: bool) -> None:
        email = form.cleaned_data["email"]
        obj.address_key, obj.erased = address_key(email), erasure_for_person(email=email)
        obj.erased_by, obj.erased_by_email = request.user, request.user.email
        super().save_model(request, obj, form, change)
