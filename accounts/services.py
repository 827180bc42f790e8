"""Opening an account: a login, the account it owns, and (for scripts) its first API key.

Money is billing's: the opening balance is a ledger grant the caller makes in the same transaction
(`billing.services.credits_grant`), so an account's balance is its ledger's sum from the first row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction

from accounts.models import Account, ApiKey, Plan
from accounts.plans import SIGNUP_PLAN


@dataclass(frozen=True)
class OpenedAccount:
    account: Account
    user: Any
    api_key: str | None


def account_open(*, email: str, password: str | None, plan_code: str = SIGNUP_PLAN, issue_key: bool) -> OpenedAccount:
    """Create the user (its username is the lowercased email), the account it owns, and a key if asked."""
    with transaction.atomic():
        user = get_user_model().objects.create_user(username=email.lower(), email=email.lower(), password=password)
        account = Account.objects.create(owner=user, plan=Plan.objects.get(code=plan_code))
        raw_key = ApiKey.issue(account=account, name="Default")[1] if issue_key else None
    return OpenedAccount(account=account, user=user, api_key=raw_key)
