"""The domain cache shared by every account and worker, under concurrent writers."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from django.db import connection

from lib import sql
from tests.support.db import committed_db
from tests.support.threads import run_at_once
from verification.engine import DomainAnswer, DomainStatus
from verification.models import DomainRecord


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks and deadlocks are PostgreSQL's")
@committed_db
def test_workers_storing_overlapping_domains_never_deadlock() -> None:
    answers = [DomainAnswer(f"d{i}.com", DomainStatus.MX, 3600, (f"mx.d{i}.com",)) for i in range(2000)]

    def store_in_own_order() -> None:
        mine = answers[:]
        random.shuffle(mine)  # each worker meets its chunk's domains in its own order
        DomainRecord.objects.put_many(mine)

    run_at_once(4, store_in_own_order)
    assert DomainRecord.objects.count() == 2000


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's write-ahead log")
@committed_db
def test_a_bulk_chunks_domains_are_stored_and_the_worker_copies_the_log_itself() -> None:
    answers = [DomainAnswer(f"w{i}.com", DomainStatus.MX, 3600, (f"mx.w{i}.com",)) for i in range(1000)]
    database = Path(connection.settings_dict["NAME"])
    DomainRecord.objects.put_many(answers)  # in batches of its own transactions
    before = database.stat().st_size  # the rows are in the log, not yet in the database file
    sql.wal_checkpoint()
    assert database.stat().st_size > before
    assert DomainRecord.objects.filter(domain__startswith="w").count() == 1000
