from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from accounts.models import Account, ApiKey
from billing.models import LedgerEntry
from billing.services import credits_grant
from lib.admin import ReadOnlyAdmin

# Ledger entries and jobs shown on an account's admin page; the filtered lists have the rest.
RECENT_ROWS = 20


def has_ledger(account: Account | None) -> bool:
    """An account with ledger entries is a financial record: deactivated, never deleted."""
    return account is not None and account.ledger_entries.exists()


class GrantCreditsForm(forms.Form):
    amount = forms.IntegerField(label="Credits to grant", min_value=1, max_value=100_000_000)
    reason = forms.CharField(label="Reason", max_length=200, help_text="Written to each account's ledger.")


@admin.register(Account)
class AccountAdmin(admin.ModelAdmin):
    list_display = ["owner_email", "plan", "credit_balance", "created_at"]
    list_filter = ["plan"]
    list_select_related = ["owner", "plan"]
    search_fields = ["owner__email"]
    # The balance moves only through the ledger (the grant action), never by typing a number.
    fields = ["owner", "plan", "credit_balance", "public_id", "secret_rotated_at", "created_at"]
    readonly_fields = ["owner", "credit_balance", "public_id", "secret_rotated_at", "created_at"]
    actions = ["grant_credits", "deactivate"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        # Accounts open through sign-up or `manage.py create_account`, which write the opening grant.
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Account | None = None) -> bool:
        # The bulk action and a user's cascade are stopped by LedgerEntry.account's PROTECT.
        return super().has_delete_permission(request, obj) and not has_ledger(obj)

    @admin.action(description="Deactivate selected accounts (owner cannot log in, keys revoked)")
    def deactivate(self, request: HttpRequest, queryset: QuerySet[Account]) -> None:
        with transaction.atomic():
            get_user_model().objects.filter(account__in=queryset).update(is_active=False)
            ApiKey.objects.filter(account__in=queryset, revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, f"Deactivated {queryset.count()} account(s).", messages.SUCCESS)

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        # Shown under the form, not as inline formsets: read-only, capped, and nothing to submit.
        account = self.get_object(request, object_id)
        recent = {
            "recent_ledger": account.ledger_entries.all()[:RECENT_ROWS] if account else [],
            "recent_jobs": account.jobs.all()[:RECENT_ROWS] if account else [],
            "api_keys": account.api_keys.all() if account else [],
        }
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), **recent})

    @admin.display(description="Owner email", ordering="owner__email")
    def owner_email(self, account: Account) -> str:
        return account.owner.email

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


admin.site.unregister(get_user_model())


@admin.register(get_user_model())
class LedgerAwareUserAdmin(UserAdmin):
    """Django's user admin, except that a customer whose account has a ledger is deactivated, not deleted."""

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        account = getattr(obj, "account", None) if obj is not None else None
        return super().has_delete_permission(request, obj) and not has_ledger(account)


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "account", "kind", "amount", "balance_after", "reference", "note"]
    list_filter = ["kind"]
    list_select_related = ["account__owner", "account__plan"]
    search_fields = ["account__owner__email", "reference", "note"]
    date_hierarchy = "created_at"
