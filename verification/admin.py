from __future__ import annotations

from django.contrib import admin

from accounts.models import Account
from lib.admin import ReadOnlyAdmin
from verification.models import CachedVerdict, DomainRecord


@admin.register(CachedVerdict)
class CachedVerdictAdmin(ReadOnlyAdmin):
    list_display = ["email", "account", "mode", "status", "created_at", "expires_at"]
    list_filter = ["status", "mode"]
    list_select_related = [f"account__{related}" for related in Account.DISPLAY_RELATED]
    search_fields = ["email", f"account__{Account.EMAIL_LOOKUP}"]


@admin.register(DomainRecord)
class DomainRecordAdmin(ReadOnlyAdmin):
    list_display = ["domain", "status", "mx_hosts", "resolved_at", "expires_at"]
    list_filter = ["status"]
    search_fields = ["domain"]
