"""Everything stored has a lifetime (docs/api.md, "What is kept, and for how long"): the hourly prune
and the orphan sweep."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import time_machine
from django.utils import timezone
from django_q.models import Schedule

from apikit.models import IdempotencyRecord
from jobs.lifecycle import job_delete
from jobs.models import DeletedJob, Job
from lib.prune import prune_expired
from tests.conftest import Persona
from verification.models import CachedVerdict, DomainRecord


def counts() -> tuple[int, int, int]:
    return CachedVerdict.objects.count(), DomainRecord.objects.count(), IdempotencyRecord.objects.count()


def test_both_hourly_schedules_exist_after_migrate(db: None) -> None:
    funcs = set(Schedule.objects.filter(schedule_type=Schedule.MINUTES, minutes=60).values_list("func", flat=True))
    assert {"lib.prune.prune_expired", "jobs.tasks.sweep_orphan_uploads"} <= funcs


# Deep verification's shared answers (tests/verification/test_deep_verify.py prunes them) and its
# verifications asked again (tests/jobs/test_resolution.py); fast mode writes none.
NO_DEEP_ANSWERS = {"CatchAllAnswer": 0, "MailboxAnswer": 0, "SmtpSessionCount": 0, "RetriedVerification": 0}
# Reported outcomes (tests/feedback prunes them after 365 days); verification writes none.
NO_FEEDBACK = {"FeedbackEvent": 0, "MailgunToken": 0}
# The bounce guarantee's records of charged valid answers, kept far longer than this test's day.
NO_OLD_ANSWERS = {"ValidAnswer": 0}


def test_prune_deletes_each_kind_of_row_once_it_expires_and_nothing_live(owner: Persona) -> None:
    start = timezone.now()
    with time_machine.travel(start, tick=False) as clock:
        owner.verify("jane@good.com", **{"Idempotency-Key": "a"})  # valid: 24 h; good.com's MX: 60 s to 6 h
        owner.verify("x@nullmx.com")  # invalid: 1 h
        assert counts() == (2, 2, 1)
        assert prune_expired() == {
            "AuditEvent": 0,
            "Invitation": 0,
            "CachedVerdict": 0,
            "DomainRecord": 0,
            "IdempotencyRecord": 0,
            "DeletedJob": 0,
            **NO_DEEP_ANSWERS,
            **NO_FEEDBACK,
            **NO_OLD_ANSWERS,
            **NO_OLD_ANSWERS,
            "StripeEvent": 0,
            "ListEvaluation": 0,
        }
        clock.shift(timedelta(hours=6, seconds=1))  # past the invalid verdict's hour and any domain TTL
        assert prune_expired() == {
            "AuditEvent": 0,
            "Invitation": 0,
            "CachedVerdict": 1,
            "DomainRecord": 2,
            "IdempotencyRecord": 0,
            "DeletedJob": 0,
            **NO_DEEP_ANSWERS,
            **NO_FEEDBACK,
            **NO_OLD_ANSWERS,
            **NO_OLD_ANSWERS,
            "StripeEvent": 0,
            "ListEvaluation": 0,
        }
        owner.verify("fresh@good.com")  # live rows made now must survive the next prune
        clock.shift(timedelta(hours=18))
        pruned = prune_expired()
    # The first verdict (24 h) and the key (24 h) are gone; the fresh verdict is 18 h old and stays.
    assert pruned == {
        "AuditEvent": 0,
        "Invitation": 0,
        "CachedVerdict": 1,
        "DomainRecord": 1,
        "IdempotencyRecord": 1,
        "DeletedJob": 0,
        **NO_DEEP_ANSWERS,
        **NO_FEEDBACK,
        **NO_OLD_ANSWERS,
        "StripeEvent": 0,
        "ListEvaluation": 0,
    }
    assert list(CachedVerdict.objects.values_list("email", flat=True)) == ["fresh@good.com"]


def test_prune_works_in_batches(owner: Persona, settings: Any) -> None:
    from lib.prune import delete_in_batches

    for i in range(7):
        owner.verify(f"user{i}@good.com")
    assert delete_in_batches(CachedVerdict.objects.all(), batch=3) == 7
    assert CachedVerdict.objects.count() == 0


def test_what_a_deleted_job_leaves_is_pruned_after_90_days(owner: Persona) -> None:
    start = timezone.now()
    with time_machine.travel(start, tick=False) as clock:
        job = Job.objects.create(account=owner.account, input_name="x", total=1)
        job_delete(account=owner.account, job_id=job.pk)
        clock.shift(DeletedJob.KEPT - timedelta(seconds=1))
        assert prune_expired()["DeletedJob"] == 0
        clock.shift(timedelta(seconds=2))
        assert prune_expired()["DeletedJob"] == 1
