"""The ledger's admin (read-only), and the account admin's money action: grant credits."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse

from accounts.admin import AccountAdmin
from accounts.models import Account
from billing.models import LedgerEntry
from billing.services import credits_grant
from lib.admin import ReadOnlyAdmin


class GrantCreditsForm(forms.Form):
    amount = forms.IntegerField(label="Credits to grant", min_value=1, max_value=100_000_000)
    reason = forms.CharField(label="Reason", max_length=200, help_text="Written to each account's ledger.")


admin.site.unregister(Account)


@admin.register(Account)
class AccountWithCreditsAdmin(AccountAdmin):
    """accounts/admin.py's account admin, with the one action that moves money."""

    actions = ["grant_credits", *AccountAdmin.actions]

    @admin.action(description="Grant credits…")
    def grant_credits(self, request: HttpRequest, queryset: QuerySet[Account]) -> TemplateResponse | None:
        form = GrantCreditsForm(request.POST if "apply" in request.POST else None)
        if form.is_valid():
            amount, reason = form.cleaned_data["amount"], form.cleaned_data["reason"]
            note = f"{reason} (staff: {request.user.get_username()})"
            with transaction.atomic():
                for account in queryset:
                    credits_grant(account=account, amount=amount, note=note[:255])
            self.message_user(request, f"Granted {amount} credits to {len(queryset)} account(s).", messages.SUCCESS)
            return None
        context = {
            **self.admin_site.each_context(request),
            "title": "Grant credits",
            "opts": self.model._meta,
            "form": form,
            "accounts": queryset,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/accounts/grant_credits.html", context)


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ReadOnlyAdmin):
    # Six columns, not seven: with `reference` and `note` side by side the table ran under the filter
    # panel at 1024 px and its last columns were cut. The note (the file and job of bulk entries)
    # says what the reference does; the reference stays on the entry's page and in the search.
    list_display = ["created_at", "account", "kind", "amount", "balance_after", "description"]
    list_filter = ["kind"]
    list_select_related = [f"account__{related}" for related in Account.DISPLAY_RELATED]
    search_fields = [f"account__{Account.EMAIL_LOOKUP}", "reference", "note"]
    date_hierarchy = "created_at"

    class Media:
        css = {"all": ["css/admin.css"]}

    @admin.display(description="Note", ordering="note")
    def description(self, entry: LedgerEntry) -> str:
        return entry.note or entry.reference
