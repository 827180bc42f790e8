from __future__ import annotations

from django.contrib import admin

from lib.admin import ReadOnlyAdmin
from verification.models import CachedVerdict, DomainRecord


@admin.register(CachedVerdict)
class CachedVerdictAdmin(ReadOnlyAdmin):
    list_display = ["email", "account", "mode", "status", "created_at", "expires_at"]
    list_filter = ["status", "mode"]
    list_select_related = ["account__owner", "account__plan"]
    search_fields = ["email", "account__owner__email"]


@admin.register(DomainRecord)
class DomainRecordAdmin(ReadOnlyAdmin):
    list_display = ["domain", "status", "mx_hosts", "resolved_at", "expires_at"]
    list_filter = ["status"]
    search_fields = ["domain"]
