from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from lib.address_keys import address_key


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows that only our code writes (ledger, caches, jobs, deliveries): staff may look, never touch.

    (Staff actions, such as a job's cancel and retry, go through the services.)
    """

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ReadOnlyInline(admin.TabularInline):
    """An inline of such rows: shown on its parent's page, never added, changed or deleted."""

    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class AddressKeySearch(admin.ModelAdmin):
    """Rows keyed by an address's HMAC (lib/address_keys.py): staff search them with the address,
    whole, since that is the only way back to its rows."""

    search_fields = ["address_key"]
    search_help_text = "A whole address: the rows hold its HMAC, not the address."

    def get_search_results(self, request: HttpRequest, queryset: Any, search_term: str) -> tuple[Any, bool]:
        if not search_term.strip():
            return queryset, False
        return queryset.filter(address_key=address_key(search_term)), False
