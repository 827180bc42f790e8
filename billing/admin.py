"""The ledger's admin (read-only), and the account admin's money action: grant credits."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.html import format_html

from accounts.admin import RECENT_ROWS, AccountAdmin
from accounts.auditing import audit
from accounts.models import Account, AuditEvent
from billing import gateway
from billing.models import Customer, LedgerEntry, Payment, StripeEvent
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
    change_form_template = "admin/billing/account_change_form.html"

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        # The account's side at Stripe, under the accounts admin's own panels, each linked to Stripe's dashboard.
        account = self.get_object(request, object_id)
        money = {
            "stripe_customer": Customer.objects.filter(account=account).first() if account else None,
            "recent_payments": Payment.objects.filter(account=account)[:RECENT_ROWS] if account else [],
            "stripe_dashboard": gateway.dashboard_url(""),
        }
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), **money})

    @admin.action(description="Grant credits…")
    def grant_credits(self, request: HttpRequest, queryset: QuerySet[Account]) -> TemplateResponse | None:
        form = GrantCreditsForm(request.POST if "apply" in request.POST else None)
        if form.is_valid():
            amount, reason = form.cleaned_data["amount"], form.cleaned_data["reason"]
            note = f"{reason} (staff: {request.user.get_username()})"
            with transaction.atomic():
                for account in queryset:
                    credits_grant(account=account, amount=amount, note=note[:255])
                    audit(request, account, AuditEvent.Action.CREDITS_GRANTED, f"{amount} credits: {note}")
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


def stripe_link(path: str, text: str) -> str:
    return format_html('<a href="{}" rel="noopener" target="_blank">{}</a>', gateway.dashboard_url(path), text)


@admin.register(Payment)
class PaymentAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "account", "kind", "product", "amount", "status", "failure", "at_stripe"]
    list_filter = ["status", "kind", "off_session"]
    list_select_related = [f"account__{related}" for related in Account.DISPLAY_RELATED]
    search_fields = [f"account__{Account.EMAIL_LOOKUP}", "stripe_id"]
    date_hierarchy = "created_at"

    @admin.display(description="At Stripe")
    def at_stripe(self, payment: Payment) -> str:
        path = "invoices" if payment.kind == Payment.Kind.PLAN else "payments"
        return stripe_link(f"{path}/{payment.stripe_id}", payment.stripe_id)


@admin.register(Customer)
class CustomerAdmin(ReadOnlyAdmin):
    list_display = ["account", "at_stripe", "card_label", "subscription_plan", "subscription", "pending_plan"]
    list_select_related = [f"account__{related}" for related in Account.DISPLAY_RELATED]
    search_fields = [f"account__{Account.EMAIL_LOOKUP}", "stripe_id", "subscription_id"]

    @admin.display(description="Stripe customer")
    def at_stripe(self, customer: Customer) -> str:
        return stripe_link(f"customers/{customer.stripe_id}", customer.stripe_id)

    @admin.display(description="Subscription")
    def subscription(self, customer: Customer) -> str:
        sub = customer.subscription_id
        return stripe_link(f"subscriptions/{sub}", sub) if sub else "—"


@admin.register(StripeEvent)
class StripeEventAdmin(ReadOnlyAdmin):
    """Every verified webhook event and what it did: mismatched ones are what staff look into."""

    list_display = ["received_at", "type", "outcome", "account", "detail", "at_stripe"]
    list_filter = ["outcome", "type"]
    search_fields = ["event_id", "detail"]
    date_hierarchy = "received_at"

    @admin.display(description="At Stripe")
    def at_stripe(self, event: StripeEvent) -> str:
        return stripe_link(f"events/{event.event_id}", event.event_id)
