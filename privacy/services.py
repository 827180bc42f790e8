"""The erasure and the export a customer asks for, with their audit lines: the API and the portal both come here."""

from __future__ import annotations

from typing import Any

from accounts.auditing import audit
from accounts.models import Account, ApiKey, AuditEvent
from privacy.erasure import erasure_for_account
from privacy.exports import export_request
from privacy.models import AccountExport


def account_erasure(*, request: Any, account: Account, emails: list[str], key: ApiKey | None = None) -> dict[str, int]:
    """Erase and audit: the audit line says how many addresses and what went, never the addresses."""
    erased = erasure_for_account(account=account, emails=emails)
    detail = f"{len(emails)} addresses; " + ", ".join(f"{store} {count}" for store, count in erased.items())
    audit(request, account, AuditEvent.Action.ADDRESSES_ERASED, detail, key=key)
    return erased


def export_asked(*, request: Any, account: Account, key: ApiKey | None = None) -> tuple[AccountExport, bool]:
    """Ask for an export (or get the one in flight: False) and audit a new one by its id."""
    export, created = export_request(account=account, user=None if key is not None else request.user, key=key)
    if created:
        audit(request, account, AuditEvent.Action.EXPORT_REQUESTED, export.pk, key=key)
    return export, created
