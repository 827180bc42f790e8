"""Helpers of the tests of unknowns resolving later (docs/deep.md "Unknowns resolve later"), shared
by the scripted farm's tests (tests/jobs/test_resolution.py) and the real Postfix's (tests/mta/)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import timedelta
from typing import Any

import time_machine
from django.utils import timezone

from jobs import tasks
from tests.support.personas import Persona

RunTasks = Callable[[], AbstractContextManager[None]]


def deep(persona: Persona, email: str, **body: Any) -> Any:
    response = persona.post_json("/v1/verify", {"email": email, "validation_mode": "deep", **body})
    assert response.status_code == 200, response.content
    return response


def read(persona: Persona, verification_id: str) -> Any:
    return persona.get(f"/v1/verifications/{verification_id}")


def balance(persona: Persona) -> int:
    persona.account.refresh_from_db()
    return persona.account.credit_balance


@contextmanager
def later(minutes: float, run_tasks: RunTasks) -> Iterator[None]:
    """`minutes` from now, the every-minute sweep run once (its tasks run when the block ends)."""
    with time_machine.travel(timezone.now() + timedelta(minutes=minutes)), run_tasks():
        tasks.reask_verifications()
        yield


def event_time(event: Any) -> float:
    return float(event.headers["webhook-timestamp"])
