"""The account's admin: plans, accounts, their keys and users. Staff grant credits from the account
list too: billing/admin.py adds that action (money moves in billing), and the ledger's own list."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils import timezone

from accounts.auditing import audit
from accounts.forms import AdminLoginForm
from accounts.models import Account, ApiKey, AuditEvent, Plan
from lib.admin import ReadOnlyAdmin

admin.site.login_form = AdminLoginForm
admin.site.site_header = "Verifier staff"
admin.site.site_title = "Verifier staff"
admin.site.index_title = "Accounts, money and records"
_staff_may_enter = admin.site.has_permission


def _staff_with_second_factor(request: HttpRequest) -> bool:
    """With ADMIN_REQUIRE_2FA=1 the admin wants staff signed in with a code (at /login: django-otp's
    middleware marks the session verified), not by password alone."""
    verified = not settings.ADMIN_REQUIRE_2FA or request.user.is_verified()  # type: ignore[union-attr]
    return _staff_may_enter(request) and verified


admin.site.has_permission = _staff_with_second_factor  # type: ignore[method-assign]
Event = AuditEvent.Action


@admin.register(Plan)
class PlanAdmin(admin.ModelAdmin):
    list_display = ["name", "code", "allows_bulk", "requests_per_second", "sort_order"]


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ["prefix", "name", "account", "scope", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["scope", ("revoked_at", admin.EmptyFieldListFilter)]
    list_select_related = [f"account__{related}" for related in Account.DISPLAY_RELATED]
    search_fields = ["prefix", "name", f"account__{Account.EMAIL_LOOKUP}"]
    # Never key_hash: a hash of a 190-bit random key is not crackable, but it is nobody's business either.
    fields = ["account", "name", "prefix", "scope", "expires_at", "allowed_ips", "created_by", "created_at"]
    fields += ["last_used_at", "revoked_at"]
    readonly_fields = ["account", "prefix", "created_by", "created_at", "last_used_at", "revoked_at"]
    actions = ["revoke_keys"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        # A key's secret part must be shown to its owner once; only the portal and the ops command can.
        return False

    @admin.action(description="Revoke selected keys")
    def revoke_keys(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        keys = list(queryset.filter(revoked_at__isnull=True))
        for key in keys:
            key.revoke()
            audit(request, key.account_id, Event.KEY_REVOKED, f"{key.prefix}… “{key.name}” (by staff)")
        self.message_user(request, f"Revoked {len(keys)} key(s).", messages.SUCCESS)


# Ledger entries and jobs shown on an account's admin page; the filtered lists have the rest.
RECENT_ROWS = 20


def has_ledger(account: Account | None) -> bool:
    """An account with ledger entries (billing's, by its PROTECT key) is a financial record:
    deactivated, never deleted."""
    return account is not None and account.ledger_entries.exists()


DEACTIVATE_INSTEAD = (
    "{count} of the selected {what} a credit ledger, a financial record kept for good, so nothing was deleted: "
    "deactivate the account instead (the accounts list's Deactivate action)."
)


class DeactivateInsteadOfDeleting:
    """The bulk delete says to deactivate, rather than list the protected ledger rows, when any selected
    row holds a ledger; without one Django's action deletes as always."""

    def ledger_account(self, obj: Any) -> Account | None:
        return obj

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        if request.method == "POST" and request.POST.get("action") == "delete_selected":
            model = self.model  # type: ignore[attr-defined]
            chosen = model._default_manager.filter(pk__in=request.POST.getlist(helpers.ACTION_CHECKBOX_NAME))
            if kept := sum(has_ledger(self.ledger_account(obj)) for obj in chosen):
                what = (
                    ("account has", "accounts have")
                    if model is Account
                    else ("user's account has", "users' accounts have")
                )
                message = DEACTIVATE_INSTEAD.format(count=kept, what=what[kept != 1])
                self.message_user(request, message, messages.WARNING)  # type: ignore[attr-defined]
                return redirect(request.get_full_path())
        return super().changelist_view(request, extra_context)  # type: ignore[misc]


@admin.register(Account)
class AccountAdmin(DeactivateInsteadOfDeleting, admin.ModelAdmin):
    list_display = ["owner_email", "plan", "credit_balance", "created_at"]
    list_filter = ["plan"]
    list_select_related = list(Account.DISPLAY_RELATED)
    search_fields = [Account.EMAIL_LOOKUP]
    # The balance moves only through the ledger (the grant action), never by typing a number.
    fields = ["owner", "plan", "credit_balance", "public_id", "secret_rotated_at", "created_at"]
    readonly_fields = ["owner", "credit_balance", "public_id", "secret_rotated_at", "created_at"]
    actions = ["deactivate"]  # billing/admin.py adds "Grant credits…"

    def has_add_permission(self, request: HttpRequest) -> bool:
        # Accounts open through sign-up or `manage.py create_account`, which write the opening grant.
        return False

    def save_model(self, request: HttpRequest, obj: Account, form: Any, change: bool) -> None:
        before = Account.objects.filter(pk=obj.pk).values_list("plan__code", flat=True).first()
        super().save_model(request, obj, form, change)
        if change and before != obj.plan.code:
            audit(request, obj, Event.PLAN_CHANGED, f"{before} → {obj.plan.code}")

    def has_delete_permission(self, request: HttpRequest, obj: Account | None = None) -> bool:
        # The bulk action and a user's cascade are stopped by LedgerEntry.account's PROTECT.
        return super().has_delete_permission(request, obj) and not has_ledger(obj)

    @admin.action(description="Deactivate selected accounts (owner cannot log in, keys revoked)")
    def deactivate(self, request: HttpRequest, queryset: QuerySet[Account]) -> None:
        with transaction.atomic():
            get_user_model().objects.filter(account__in=queryset).update(is_active=False)  # their owners
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
            "members": account.memberships.select_related("user") if account else [],
        }
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), **recent})

    @admin.display(description="Owner email", ordering=Account.EMAIL_LOOKUP)
    def owner_email(self, account: Account) -> str:
        return account.email


admin.site.unregister(get_user_model())


@admin.register(get_user_model())
class LedgerAwareUserAdmin(DeactivateInsteadOfDeleting, UserAdmin):
    """Django's user admin, except that a customer whose account has a ledger is deactivated, not deleted."""

    def ledger_account(self, obj: Any) -> Account | None:
        return getattr(obj, "account", None)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        account = getattr(obj, "account", None) if obj is not None else None
        return super().has_delete_permission(request, obj) and not has_ledger(account)


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "account", "action", "who", "ip", "detail"]
    list_filter = ["action"]
    list_select_related = [f"account__{related}" for related in Account.DISPLAY_RELATED]
    search_fields = [f"account__{Account.EMAIL_LOOKUP}", "actor_email", "key_prefix", "detail"]
    date_hierarchy = "created_at"
