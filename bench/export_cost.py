"""``python -m bench --only export``: what building an account's export costs (docs/privacy.md, "Export").

On a fresh stack (SQLite, then PostgreSQL + Redis: BENCH_PG_DB and BENCH_REDIS_URL name others), one
account with LEDGER_ROWS ledger entries, JOBS finished jobs, AUDIT_ROWS audit rows, PAYMENTS payments
and REPORTS reported outcomes. Each round builds its export in a new Django process (the worker's
function, `privacy.export_build.export_build`, called directly: no queue in the timing) and reports:

- seconds for the whole build (query, ZIP, save to the storage), with the cyclic collector as a worker has it;
- the growth of the process's peak RSS over the build (`resource.getrusage(RUSAGE_SELF).ru_maxrss` after
  minus before, the process already set up and the account's rows already in the database): what the
  build added to the most the process ever held;
- in a second build in the same process, tracemalloc's peak of Python allocations during the build
  (slower under tracing, so not timed);
- the ZIP's size and rows written (each row twice: JSON and CSV).

ROUNDS rounds: median (min, max), with the 1-minute load average before and after.
"""

from __future__ import annotations

import json
import os
import statistics
from typing import Any

LEDGER_ROWS = 100_000
JOBS = 10
AUDIT_ROWS = 1_000
PAYMENTS = 20
REPORTS = 1_000
ROUNDS = 3
OWNER = "export-owner@bench.example"
FIGURES = ("seconds", "maxrss_growth_mb", "tracemalloc_peak_mb", "zip_mb", "rows")


def populate() -> None:
    """Run once in the stack's Django process: the account and its rows."""
    from datetime import timedelta

    from django.utils import timezone

    from accounts.models import AuditEvent
    from accounts.services import account_open
    from billing.models import LedgerEntry, Payment
    from feedback.models import KEPT, FeedbackEvent
    from jobs.models import Job
    from lib.address_keys import address_key

    account = account_open(email=OWNER, password=None, plan_code="pro", issue_key=True).account
    now = timezone.now()
    LedgerEntry.objects.bulk_create(
        (
            LedgerEntry(account=account, kind="spend", amount=-1, balance_after=LEDGER_ROWS - n, reference="verify")
            for n in range(LEDGER_ROWS)
        ),
        batch_size=5000,
    )
    Job.objects.bulk_create(
        Job(account=account, status="completed", total=10_000, processed=10_000, valid=9_000, invalid=1_000,
            input_name=f"jobs/bench{n}/input", filename=f"list-{n}.csv", completed_at=now)
        for n in range(JOBS)
    )  # fmt: skip
    AuditEvent.objects.bulk_create(
        AuditEvent(account=account, action="signed_in", actor_email=OWNER, ip="127.0.0.1") for _ in range(AUDIT_ROWS)
    )
    Payment.objects.bulk_create(
        Payment(account=account, stripe_id=f"pi_bench{n}", kind="pack", product="pack_1k", credits=1000, cents=1000,
                currency="usd", status="succeeded")
        for n in range(PAYMENTS)
    )  # fmt: skip
    FeedbackEvent.objects.bulk_create(
        FeedbackEvent(account=account, address_key=address_key(f"u{n}@d{n % 50}.example"), domain=f"d{n % 50}.example",
                      outcome="delivered", occurred_at=now - timedelta(seconds=n), expires_at=now + KEPT)
        for n in range(REPORTS)
    )  # fmt: skip


def measure() -> dict[str, float]:
    """Run in a new Django process: one build timed with its RSS growth, then one under tracemalloc."""
    import resource
    import time
    import tracemalloc

    found: dict[str, float] = {}
    export = _new_export()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    _build(export)
    found["seconds"] = time.perf_counter() - started
    found["maxrss_growth_mb"] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024  # KiB on Linux
    done = _done(export)
    found["zip_mb"], found["rows"] = done.file_bytes / 1e6, float(done.rows_done)
    traced = _new_export()
    tracemalloc.start()
    _build(traced)
    found["tracemalloc_peak_mb"] = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    _done(traced)
    return found


def _new_export() -> Any:
    from privacy.models import AccountExport

    return AccountExport.objects.create(account_id=_account_id())


def _account_id() -> int:
    from accounts.models import Account

    return int(Account.objects.get(owner__email=OWNER).pk)


def _build(export: Any) -> None:
    from privacy.export_build import export_build

    export_build(export_id=export.pk)


def _done(export: Any) -> Any:
    export.refresh_from_db()
    assert export.status == "done", (export.status, export.failure)
    return export


def run() -> dict[str, dict[str, list[float]]]:
    """{backend: {figure: [value per round]}}, the rounds on one stack per backend."""
    from bench.stack import Stack

    found: dict[str, dict[str, list[float]]] = {}
    for backend in ("sqlite", "postgres"):
        figures: dict[str, list[float]] = {figure: [] for figure in FIGURES}
        env = {"EMAIL_BACKEND": "django.core.mail.backends.locmem.EmailBackend"}
        with Stack(backend, "127.0.0.1:53", extra_env=env) as stack:
            stack.shell("from bench.export_cost import populate; populate()")
            for _ in range(ROUNDS):
                code = "import json; from bench.export_cost import measure; print(json.dumps(measure()))"
                for figure, value in json.loads(stack.shell(code).strip().splitlines()[-1]).items():
                    figures[figure].append(value)
        found[backend] = figures
    return found


def report(found: dict[str, dict[str, list[float]]]) -> str:
    lines = [
        f"Export of one account: {LEDGER_ROWS:,} ledger rows, {JOBS} jobs, {AUDIT_ROWS:,} audit rows, {PAYMENTS} "
        f"payments, {REPORTS:,} reports; {ROUNDS} rounds, each a new process: median (min, max)"
    ]
    for backend, figures in found.items():
        for figure in FIGURES:
            values = figures[figure]
            lines.append(
                f"  {backend:8s} {figure:20s} {statistics.median(values):10.2f} ({min(values):.2f}, {max(values):.2f})"
            )
    return "\n".join(lines)


def main() -> int:
    before = os.getloadavg()
    found = run()
    print(report(found))
    after = os.getloadavg()
    print(f"Load average (1, 5, 15 min): before {before[0]:.2f}, {before[1]:.2f}, {before[2]:.2f}; "
          f"after {after[0]:.2f}, {after[1]:.2f}, {after[2]:.2f}")  # fmt: skip
    print(json.dumps(found))
    return 0
