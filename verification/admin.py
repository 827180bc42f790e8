from __future__ import annotations

from django.contrib import admin

from accounts.models import Account
from lib.admin import AddressKeySearch, ReadOnlyAdmin
from verification.models import CachedVerdict, CatchAllAnswer, DomainRecord, MailboxAnswer


@admin.register(CachedVerdict)
class CachedVerdictAdmin(ReadOnlyAdmin):
    list_display = ["email", "account", "validation_mode", "status", "created_at", "expires_at"]
    list_filter = ["status", "validation_mode"]
    list_select_related = [f"account__{related}" for related in Account.DISPLAY_RELATED]
    search_fields = ["email", f"account__{Account.EMAIL_LOOKUP}"]


@admin.register(DomainRecord)
class DomainRecordAdmin(ReadOnlyAdmin):
    list_display = ["domain", "status", "mx_hosts", "resolved_at", "expires_at"]
    list_filter = ["status"]
    search_fields = ["domain"]


@admin.register(MailboxAnswer)
class MailboxAnswerAdmin(AddressKeySearch, ReadOnlyAdmin):
    """Deep mode's shared answers: what a mail server said of a mailbox, whoever asked (docs/deep.md)."""

    list_display = ["address_key", "meaning", "code", "text", "asked_at", "expires_at"]
    list_filter = ["meaning"]


@admin.register(CatchAllAnswer)
class CatchAllAnswerAdmin(ReadOnlyAdmin):
    list_display = ["domain", "accepts_any", "asked_at", "expires_at"]
    list_filter = ["accepts_any"]
    search_fields = ["domain"]
