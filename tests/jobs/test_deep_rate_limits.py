"""A deep job on a domain whose MX limits our connection rate (Postfix's anvil in the farm, 2 a
second here) ends with every row definitive: the rows of a refused session are folded into the
sessions the server took, or asked again once the address's allowance lets a session in
(docs/deep.md, "Rate limits"). And a deep job's answers reach the shared stores once it is
completed. Tasks in sync mode."""

from __future__ import annotations

import pytest

from jobs.models import Job
from tests.conftest import Persona
from tests.jobs.conftest import RunTasks
from tests.support.bulk_jobs import deep_upload, job_body
from tests.support.deep import RATE_LIMITED
from tests.support.mx_farm import MxFarm
from verification.engine.smtp_answers import Answer
from verification.models import MailboxAnswer
from verification.models.mailbox_answers import MailboxAnswerQuerySet


def test_a_hundred_rows_on_a_rate_limited_mx_all_end_valid_or_invalid(
    owner: Persona, run_tasks: RunTasks, deep_farm: MxFarm
) -> None:
    rows = [f"user{i}@ratelimited.deepfarm.net" for i in range(100)]  # the even ones exist
    with run_tasks():
        job_id = deep_upload(owner, rows).json()["id"]
    body = job_body(owner, job_id)
    assert body["status"] == "completed"
    assert body["progress"] == {"total": 100, "processed": 100, "valid": 50, "invalid": 50, "risky": 0, "unknown": 0}
    # Three sessions at once, the third refused: its rows folded into the two the server took.
    assert deep_farm.stats.rate_refused[RATE_LIMITED] == 1 and deep_farm.stats.sessions[RATE_LIMITED] == 3
    # Every row asked once; the catch-all probe not at all: the domain refused the odd ones as unknown.
    assert deep_farm.stats.commands["RCPT"] == 100


def test_what_the_servers_answered_is_stored_once_the_job_is_completed(
    owner: Persona, run_tasks: RunTasks, deep_farm: MxFarm, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shared stores' writes wait until the chunks are settled and the job completed (lib/deferred.py),
    and still happen in the same task."""
    statuses: list[str] = []
    store_many = MailboxAnswerQuerySet.store_many

    def recording(self: MailboxAnswerQuerySet, answers: dict[str, Answer]) -> None:
        statuses.extend(Job.objects.values_list("status", flat=True))
        store_many(self, answers)

    monkeypatch.setattr(MailboxAnswerQuerySet, "store_many", recording)
    with run_tasks():
        job_id = deep_upload(owner, ["alice@mailbox.deepfarm.net", "nobody@mailbox.deepfarm.net"]).json()["id"]
    assert job_body(owner, job_id)["status"] == "completed"
    assert statuses == ["completed"]
    assert set(MailboxAnswer.objects.fresh_many(["alice@mailbox.deepfarm.net", "nobody@mailbox.deepfarm.net"])) == {
        "alice@mailbox.deepfarm.net",
        "nobody@mailbox.deepfarm.net",
    }
