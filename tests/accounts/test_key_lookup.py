"""ApiKey.objects.find, the one hand-written lookup every API request makes: the instances it builds
agree with the ORM's, field by field, whatever fields the models have now or gain later."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import models
from django.utils import timezone

from accounts.models import ApiKey, KeyMode
from accounts.models.keys import loaded
from tests.conftest import Persona


def fields_of(instance: models.Model) -> dict[str, object]:
    """Every concrete field, read through the instance (a field find() did not load loads now)."""
    return {field.attname: getattr(instance, field.attname) for field in type(instance)._meta.concrete_fields}


def test_find_builds_the_key_its_account_and_plan_as_the_orm_loads_them(owner: Persona) -> None:
    key, raw = ApiKey.issue(
        account=owner.account,
        key_mode=KeyMode.TEST,
        scope=ApiKey.Scope.VERIFY,
        expires_at=timezone.now() + timedelta(days=3),
        allowed_ips=["127.0.0.1/32"],
    )
    ApiKey.objects.filter(pk=key.pk).update(last_used_at=timezone.now() - timedelta(hours=1))
    found = ApiKey.objects.find(raw)
    assert found is not None
    stored = ApiKey.objects.select_related("account__plan").get(pk=key.pk)
    assert fields_of(found) == fields_of(stored)
    assert fields_of(found.account) == fields_of(stored.account)
    assert fields_of(found.account.plan) == fields_of(stored.account.plan)
    assert found.creator_role == "owner"


def test_values_are_placed_by_field_name_not_by_the_order_they_are_given(owner: Persona) -> None:
    key = owner.account.api_keys.get()
    names = ["revoked_at", "key_mode", "scope", "account_id", "id"]
    values = {name: getattr(key, name) for name in names}
    backwards = loaded(ApiKey, "default", **dict(reversed(list(values.items()))))
    assert {name: getattr(backwards, name) for name in names} == values
    assert backwards.get_deferred_fields() >= {"name", "prefix", "key_hash"}


def test_a_field_the_model_does_not_have_is_refused_not_dropped() -> None:
    with pytest.raises(AssertionError, match="no field"):
        loaded(ApiKey, "default", id=1, mode="live")
