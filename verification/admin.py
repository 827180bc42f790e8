from __future__ import annotations

from django.contrib import admin

from accounts.models import Account
from lib.admin import ReadOnlyAdmin
from verification.models import CachedVerdict, CatchAllAnswer, DomainRecord, MailboxAnswer, RetriedVerification


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
class MailboxAnswerAdmin(ReadOnlyAdmin):
    """Deep mode's shared answers: what a mail server said of a mailbox, whoever asked (docs/deep.md)."""

    list_display = ["email", "meaning", "code", "text", "asked_at", "expires_at"]
    list_filter = ["meaning"]
    search_fields = ["email"]


@admin.register(CatchAllAnswer)
class CatchAllAnswerAdmin(ReadOnlyAdmin):
    list_display = ["domain", "accepts_any", "asked_at", "expires_at"]
    list_filter = ["accepts_any"]
    search_fields = ["domain"]


@admin.register(RetriedVerification)
class RetriedVerificationAdmin(ReadOnlyAdmin):
    """Deep answers `unknown` for a temporary reason, asked again later (docs/deep.md)."""

    list_display = ["id", "account", "state", "attempts", "next_attempt_at", "charged", "created_at"]
    list_filter = ["state", "charged"]
    list_select_related = [f"account__{related}" for related in Account.DISPLAY_RELATED]
    search_fields = ["id", f"account__{Account.EMAIL_LOOKUP}"]
