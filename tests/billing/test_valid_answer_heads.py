"""Charged valid answers are found through their address key's head (billing/models.py, ValidAnswer)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from billing.models import ValidAnswer
from lib.address_keys import address_key, key_head
from tests.conftest import Persona
from tests.support.db import committed_db

BEFORE = [("billing", "0009_guarantee")]


def answer(persona: Persona, key: str, head: int | None = None) -> ValidAnswer:
    at = timezone.now()
    return ValidAnswer.objects.create(
        account=persona.account,
        address_key=key,
        key_head=key_head(key) if head is None else head,
        provider_family="other",
        high_confidence=True,
        answered_at=at,
        expires_at=at + timedelta(days=400),
    )


def test_an_answer_sharing_only_the_head_of_a_key_is_not_that_keys(owner: Persona) -> None:
    key = address_key("someone@example.com")
    own = answer(owner, key)
    # Another key forced onto the same head, as two of 2^60 heads could meet.
    other = answer(owner, address_key("someone.else@example.com"), head=key_head(key))
    assert list(ValidAnswer.objects.of_keys([key])) == [own]
    assert set(ValidAnswer.objects.filter(key_head=key_head(key))) == {own, other}


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's plan names the index it uses")
def test_a_bounce_finds_its_answer_through_the_heads_index(owner: Persona) -> None:
    plan = ValidAnswer.objects.of_keys([address_key("someone@example.com")]).filter(account=owner.account).explain()
    assert "valid_answer_head" in plan


@committed_db
def test_the_migration_gives_each_answer_kept_before_it_its_head(owner: Persona) -> None:
    keys = [address_key(f"person{n}@example.com") for n in range(3)]
    executor = MigrationExecutor(connection)
    latest = executor.loader.graph.leaf_nodes()
    executor.migrate(BEFORE)
    try:
        old = executor.loader.project_state(BEFORE).apps.get_model("billing", "ValidAnswer")
        at = timezone.now()
        for key in keys:
            old.objects.create(
                account_id=owner.account.pk,
                address_key=key,
                provider_family="other",
                high_confidence=True,
                answered_at=at,
                expires_at=at,
            )
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(latest)
    heads = dict(ValidAnswer.objects.values_list("address_key", "key_head"))
    assert heads == {key: int(key[:15], 16) for key in keys}
