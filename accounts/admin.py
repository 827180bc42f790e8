from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from accounts.forms import AdminLoginForm
from accounts.models import ApiKey, Plan

admin.site.login_form = AdminLoginForm


@admin.register(Plan)
class PlanAdmin(admin.ModelAdmin):
    list_display = ["name", "code", "allows_bulk", "requests_per_second", "sort_order"]


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ["prefix", "name", "account", "created_at", "last_used_at", "revoked_at"]
    list_filter = [("revoked_at", admin.EmptyFieldListFilter)]
    list_select_related = ["account__owner", "account__plan"]
    search_fields = ["prefix", "name", "account__owner__email"]
    # Never key_hash: a hash of a 190-bit random key is not crackable, but it is nobody's business either.
    fields = ["account", "name", "prefix", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = ["account", "prefix", "created_at", "last_used_at", "revoked_at"]
    actions = ["revoke_keys"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        # A key's secret part must be shown to its owner once; only the portal and the ops command can.
        return False

    @admin.action(description="Revoke selected keys")
    def revoke_keys(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        keys = list(queryset.filter(revoked_at__isnull=True))
        for key in keys:
            key.revoke()
        self.message_user(request, f"Revoked {len(keys)} key(s).", messages.SUCCESS)
