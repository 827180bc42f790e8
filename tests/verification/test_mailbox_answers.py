"""The shared store of mail servers' answers about mailboxes (verification/models/mailbox_answers.py):
what is stored is found again by address while fresh, however many addresses a batch asks for."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.utils import timezone

from lib import sql
from verification.engine.smtp_answers import Answer
from verification.engine.smtp_replies import Meaning, Reply
from verification.models import MailboxAnswer

ACCEPTED = Answer(Reply(250, "2.1.5 Ok"), Meaning.ACCEPTED)  # kept 24 h
REFUSED = Answer(Reply(550, "5.1.1 Recipient address rejected"), Meaning.NO_MAILBOX)  # kept 1 h


@pytest.mark.django_db
def test_answers_are_found_again_while_fresh_across_batches_of_the_bound_parameter_limit(monkeypatch: Any) -> None:
    monkeypatch.setattr(sql, "SQLITE_PARAMETERS", 10)  # so that 30 addresses take several statements on SQLite
    accepted = {f"user{i}@batch.example": ACCEPTED for i in range(20)}
    refused = {f"gone{i}@batch.example": REFUSED for i in range(5)}
    MailboxAnswer.objects.store_many({**accepted, **refused})
    asked = [*accepted, *refused, *(f"never{i}@batch.example" for i in range(5))]
    assert MailboxAnswer.objects.fresh_many(asked) == {**accepted, **refused}
    with time_machine.travel(timezone.now() + timedelta(hours=2)):
        assert MailboxAnswer.objects.fresh_many(asked) == accepted  # the refusals' hour is over
