"""``python -m bench --only feedback-cost``: what the feedback lookup adds to one verification.

Every answer (single, batch, a bulk chunk) passes through `verification.outcomes.verdicts_with_feedback`:
the reports of the addresses asked, and for a catch-all verdict the domain's reports and the global
catch-all rate. This times that call alone, in a Django process on a fresh SQLite stack (and again on
PostgreSQL), for one address at a time: with an empty feedback store, and with a populated one
(ACCOUNTS accounts, ROWS reports on DOMAINS domains, CATCH_ALL of them known catch-all). Median
milliseconds per call over CALLS calls (fewer past BUDGET_SECONDS), and the queries each call makes;
ROUNDS rounds, each on a fresh stack: median (min, max).
"""

from __future__ import annotations

import json
import os
import statistics
import time
from typing import Any

ACCOUNTS = 200
ROWS = 200_000
DOMAINS = 10_000
CATCH_ALL = 5_000
CALLS = 300  # a case stops early after BUDGET_SECONDS, once it has MIN_CALLS
BUDGET_SECONDS = 5.0
MIN_CALLS = 5
ROUNDS = 3
CASES = ("plain address, empty store", "catch-all address, empty store", "plain address", "catch-all address")


def measure() -> dict[str, tuple[float, int]]:
    """Run inside the stack's Django process: {case: (median ms per call, queries per call)}, first on the
    empty store, then on the populated one."""
    asker = _one_account()
    found = {f"{case}, empty store": timing for case, timing in _timed(asker).items()}
    _populate(asker)
    return found | _timed(asker)


def _timed(account_id: int) -> dict[str, tuple[float, int]]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from verification.outcomes import verdicts_with_feedback

    found: dict[str, tuple[float, int]] = {}
    for name, verdict in (("plain address", _verdict(False)), ("catch-all address", _verdict(True))):
        verdicts_with_feedback(account_id=account_id, verdicts=[verdict])
        with CaptureQueriesContext(connection) as queries:
            verdicts_with_feedback(account_id=account_id, verdicts=[verdict])
        timings: list[float] = []
        budget = time.perf_counter() + BUDGET_SECONDS
        while len(timings) < CALLS and (len(timings) < MIN_CALLS or time.perf_counter() < budget):
            started = time.perf_counter()
            verdicts_with_feedback(account_id=account_id, verdicts=[verdict])
            timings.append((time.perf_counter() - started) * 1000)
        found[name] = (statistics.median(timings), len(queries))
    return found


def _one_account() -> int:
    from accounts.services import account_open

    return account_open(email="asker@bench.example", password=None, issue_key=False).account.pk


def _populate(asker: int) -> None:
    import random
    from datetime import timedelta

    from django.utils import timezone

    from accounts.services import account_open
    from feedback.models import KEPT, FeedbackEvent
    from lib.address_keys import address_key
    from verification.models import CatchAllAnswer

    rng = random.Random(7)
    accounts = [asker] + [
        account_open(email=f"a{n}@bench.example", password=None, issue_key=False).account.pk for n in range(1, ACCOUNTS)
    ]
    now = timezone.now()
    CatchAllAnswer.objects.store_many({f"d{n}.example": n < CATCH_ALL for n in range(DOMAINS)})
    events = []
    for _ in range(ROWS):
        domain = f"d{rng.randrange(DOMAINS)}.example"
        when = now - timedelta(days=rng.uniform(0, 300), seconds=rng.random())
        outcome = "delivered" if rng.random() < 0.8 else "hard_bounce"
        events.append(
            FeedbackEvent(
                account_id=rng.choice(accounts),
                address_key=address_key(f"u{rng.randrange(60)}@{domain}"),
                domain=domain,
                outcome=outcome,
                occurred_at=when,
                expires_at=when + KEPT,
            )
        )
    FeedbackEvent.objects.bulk_create(events, batch_size=5000, ignore_conflicts=True)


def _verdict(catch_all: bool) -> Any:
    from verification.engine.verdict import Checks, Status, SubStatus, Verdict

    checks = Checks(True, True, True, None, False, False, catch_all, False)
    return Verdict(
        email="u1@d1.example",  # a domain with reports, known catch-all
        is_valid=not catch_all,
        status=Status.RISKY if catch_all else Status.VALID,
        sub_status=SubStatus.CATCH_ALL if catch_all else None,
        validation_mode="deep",
        confidence="medium",
        score=60,
        checks=checks,
    )


def run() -> dict[str, dict[str, list[tuple[float, int]]]]:
    """{backend: {case: [(ms, queries) per round]}}, each round on a fresh stack."""
    from bench.stack import Stack

    found: dict[str, dict[str, list[tuple[float, int]]]] = {}
    for backend in ("sqlite", "postgres"):
        cases: dict[str, list[tuple[float, int]]] = {case: [] for case in CASES}
        for _ in range(ROUNDS):
            with Stack(backend, "127.0.0.1:53") as stack:
                code = "import json; from bench.feedback_cost import measure; print(json.dumps(measure()))"
                for case, (ms, queries) in json.loads(stack.shell(code).strip().splitlines()[-1]).items():
                    cases[case].append((ms, queries))
        found[backend] = cases
    return found


def report(found: dict[str, dict[str, list[tuple[float, int]]]]) -> str:
    lines = [
        f"verdicts_with_feedback, one address a call, up to {CALLS} calls a round, {ROUNDS} rounds: "
        "median ms (min, max); "
        f"populated store: {ROWS:,} reports by {ACCOUNTS} accounts on {DOMAINS:,} domains, {CATCH_ALL:,} catch-all"
    ]
    for backend, cases in found.items():
        for case, rounds in cases.items():
            ms = [m for m, _ in rounds]
            queries = sorted({q for _, q in rounds})
            lines.append(
                f"  {backend:8s} {case:32s} {statistics.median(ms):7.2f} ({min(ms):.2f}, {max(ms):.2f}) ms, "
                f"{'/'.join(map(str, queries))} queries"
            )
    return "\n".join(lines)


def main() -> int:
    before = os.getloadavg()[0]
    found = run()
    print(report(found))
    print(f"1-minute load average: before {before:.2f}, after {os.getloadavg()[0]:.2f}")
    return 0
