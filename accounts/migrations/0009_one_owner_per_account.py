"""Every account opened before members existed gets its one person as its owner member, and every
key it has is recorded as made by that person (so the key keeps working as before)."""

from __future__ import annotations

from typing import Any

from django.db import migrations
from django.db.models import OuterRef, Subquery


def owners_become_members(apps: Any, schema_editor: Any) -> None:
    Account = apps.get_model("accounts", "Account")
    Membership = apps.get_model("accounts", "Membership")
    ApiKey = apps.get_model("accounts", "ApiKey")
    have_members = Membership.objects.values("account_id")
    Membership.objects.bulk_create(
        Membership(account_id=account_id, user_id=owner_id, role="owner")
        for account_id, owner_id in Account.objects.exclude(pk__in=have_members).values_list("pk", "owner_id")
    )
    owner = Account.objects.filter(pk=OuterRef("account_id")).values("owner_id")[:1]
    ApiKey.objects.filter(created_by__isnull=True).update(created_by_id=Subquery(owner))


class Migration(migrations.Migration):
    dependencies = [("accounts", "0008_members_and_key_scopes")]

    operations = [migrations.RunPython(owners_become_members, migrations.RunPython.noop)]
