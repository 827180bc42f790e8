"""Unknowns resolve later, against the real postgrey (docs/deep.md "Unknowns resolve later"): a
deep verification greylisted by Postfix's policy service is asked again when the schedule says,
and resolves once postgrey's own (real-time) delay has passed."""

from __future__ import annotations

import time
from typing import Any

import pytest
from verifier import verify_callback

from tests.conftest import Persona
from tests.jobs.conftest import Receiver, RunTasks, ledger_sum
from tests.support.mta import GREYLIST_DELAY, Postfix
from tests.support.resolution import balance, deep, event_time, later, read
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.mta, pytest.mark.usefixtures("on_mtas")]


@pytest.mark.parametrize(
    ("charge_unknown", "mailbox", "after_first"),
    [(True, "user101", 999), (False, "user102", 1000)],
    ids=["unknowns-charged", "unknowns-free"],
)
def test_a_greylisted_verification_resolves_on_the_schedule_once_postgreys_delay_has_passed(
    owner: Persona,
    outsider: Persona,
    postfix: Postfix,
    receiver: Receiver,
    run_tasks: RunTasks,
    settings: Any,
    charge_unknown: bool,
    mailbox: str,
    after_first: int,
) -> None:
    settings.VERIFIER_CHARGE_UNKNOWN = charge_unknown
    email = f"{mailbox}@greylist.mtamatrix.net"  # a (client, sender, recipient) postgrey has not seen
    mark = postfix.log.mark()
    first_seen = time.monotonic()
    body = deep(owner, email, callback_url=receiver.url).json()
    assert (body["status"], body["sub_status"]) == ("unknown", "greylisted")
    # Postfix writes its log a moment after the reply: wait for the session's end before reading it.
    assert postfix.log.sessions("greylist", mark, at_least=1) == 1
    assert postfix.log.lines("greylist", mark, "Greylisted"), "postgrey, not another refusal, said 450"
    verification_id = body["verification_id"]
    assert read(owner, verification_id).json()["resolution"]["state"] == "pending"
    assert balance(owner) == after_first
    assert read(outsider, verification_id).status_code == 404

    wait_until(
        lambda: time.monotonic() > first_seen + GREYLIST_DELAY + 0.5, "postgrey's delay to pass", GREYLIST_DELAY + 5
    )
    with later(4, run_tasks):  # the delay is over, but the first retry is not due until 5 minutes
        pass
    pending = read(owner, verification_id).json()["resolution"]
    assert (pending["state"], pending["attempts"]) == ("pending", 0)
    assert postfix.log.sessions("greylist", mark, at_least=1) == 1
    with later(6, run_tasks):
        pass
    found = read(owner, verification_id).json()
    assert (found["status"], found["resolution"]) == (
        "valid",
        {"state": "resolved", "attempts": 1, "next_attempt_at": None},
    )
    assert postfix.log.sessions("greylist", mark, at_least=2) == 2  # the first ask and the one retry
    with later(60, run_tasks):  # settled: never asked again, never announced again
        pass
    assert balance(owner) == 999 == ledger_sum(owner)

    (event,) = receiver.received
    payload = verify_callback(event.body, event.headers, owner.account.signing_secret, now=event_time(event))
    assert (payload["event"], payload["verification_id"]) == ("verification.resolved", verification_id)
    assert (payload["status"], payload["resolution"]["state"]) == ("valid", "resolved")
