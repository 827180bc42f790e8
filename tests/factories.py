from __future__ import annotations

from typing import Any

import factory
from django.contrib.auth import get_user_model
from django.utils import timezone

from accounts.models import Account, ApiKey, Membership, Plan, Role
from accounts.plans import plan_defaults
from billing.services import credits_grant


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    email = factory.Sequence(lambda n: f"owner{n}@company.example.com")
    username = factory.SelfAttribute("email")
    password = factory.django.Password("correct horse battery staple")


class AccountFactory(factory.django.DjangoModelFactory):
    """An account whose opening credits go through the ledger, like a real one."""

    class Meta:
        model = Account
        skip_postgeneration_save = True

    class Params:
        plan_code = "starter"

    owner = factory.SubFactory(UserFactory)
    email_confirmed_at = factory.LazyFunction(timezone.now)
    # get_or_create: transactional tests flush the rows the data migration made.
    plan = factory.LazyAttribute(
        lambda o: Plan.objects.get_or_create(code=o.plan_code, defaults=plan_defaults(o.plan_code))[0]
    )

    @factory.post_generation
    def members(self, create: bool, extracted: Any, **kwargs: Any) -> None:
        """Its owner is its first member, as `account_open` makes it."""
        if create:
            Membership.objects.create(account=self, user=self.owner, role=Role.OWNER)

    @factory.post_generation
    def credits(self, create: bool, extracted: int | None, **kwargs: Any) -> None:
        amount = 1000 if extracted is None else extracted
        if create and amount:
            credits_grant(account=self, amount=amount, note="factory")


def issue_key(account: Account, name: str = "Test key") -> str:
    return ApiKey.issue(account=account, name=name)[1]
