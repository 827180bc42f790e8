from __future__ import annotations

from django.contrib import admin

from billing.models import LedgerEntry
from lib.admin import ReadOnlyAdmin


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "account", "kind", "amount", "balance_after", "reference", "note"]
    list_filter = ["kind"]
    list_select_related = ["account__owner", "account__plan"]
    search_fields = ["account__owner__email", "reference", "note"]
    date_hierarchy = "created_at"
