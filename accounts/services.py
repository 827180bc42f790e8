"""Opening accounts: the owner user, the account, its first key and its credits, at once."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction

from accounts.models import Account, ApiKey, Plan
from billing.services import credits_grant

SIGNUP_PLAN = "free"
SIGNUP_CREDITS = 100


@dataclass(frozen=True)
class OpenedAccount:
    account: Account
    api_key: str | None


def account_open(
    *, email: str, password: str | None, plan_code: str = SIGNUP_PLAN, credits: int = SIGNUP_CREDITS, issue_key: bool
) -> OpenedAccount:
    User = get_user_model()
    with transaction.atomic():
        user = User.objects.create_user(username=email.lower(), email=email.lower(), password=password)
        account = Account.objects.create(owner=user, plan=Plan.objects.get(code=plan_code))
        if credits:
            credits_grant(account=account, amount=credits, note="Opening balance")
        raw_key = ApiKey.issue(account=account, name="Default")[1] if issue_key else None
    return OpenedAccount(account=account, api_key=raw_key)
