"""The erasure a customer asks for, with its audit line: the API and the portal both come here."""

from __future__ import annotations

from typing import Any

from accounts.auditing import audit
from accounts.models import Account, ApiKey, AuditEvent
from privacy.erasure import erasure_for_account


def account_erasure(*, request: Any, account: Account, emails: list[str], key: ApiKey | None = None) -> dict[str, int]:
    """Erase and audit: the audit line says how many addresses and what went, never the addresses."""
    erased = erasure_for_account(account=account, emails=emails)
    detail = f"{len(emails)} addresses; " + ", ".join(f"{store} {count}" for store, count in erased.items())
    audit(request, account, AuditEvent.Action.ADDRESSES_ERASED, detail, key=key)
    return erased
