"""The service's Prometheus metrics (prometheus-client), counted where the work happens.

With PROMETHEUS_MULTIPROC_DIR set (several gunicorn workers, qcluster on the same machine),
prometheus-client writes each process's values to files in that folder and /metrics adds
them up (ops/views.py); without it the values live in this process only.
"""

from __future__ import annotations

from collections import Counter as Tally
from collections.abc import Iterable

from prometheus_client import Counter, Histogram

VERIFICATIONS = Counter(
    "verifier_verifications_total", "Addresses verified, by verdict status and door.", ["status", "source"]
)
BULK_ROWS = Counter("verifier_bulk_rows_total", "Rows of bulk jobs verified (chunks recorded).")
DNS_QUERIES = Counter(
    "verifier_dns_queries_total",
    "Domains looked up in DNS (not served from the domain cache), by outcome.",
    ["outcome"],
)
WITHHELD = Counter(
    "verifier_dns_verdicts_withheld_total",
    "Verdicts not given because the DNS resolver was broken: single verifies answered unknown free of "
    "charge, and rows of bulk chunks put back to wait.",
    ["source"],
)
CALLBACK_ATTEMPTS = Counter(
    "verifier_callback_attempts_total", "Callback deliveries attempted, by outcome.", ["outcome"]
)
SMTP_SESSIONS = Counter(
    "verifier_smtp_sessions_total",
    "SMTP sessions of deep verification opened, by outcome (completed, blocked, unreachable: no answer, "
    "backed_off: turned away for now by a rate limit or another 4xx at the door).",
    ["outcome"],
)
SMTP_WORK_CUT = Counter(
    "verifier_smtp_work_cut_total",
    "What deep verification's bounds left out (docs/deep.md, Bounded work): MX hosts named beyond the "
    "first five, MX addresses beyond five or already tried.",
    ["what"],
)
ROWS_FAILED = Counter(
    "verifier_rows_failed_total",
    "Addresses whose judging raised an error on our side: answered unknown/verification_failed, the rest "
    "of their request or chunk went on (logged with the error).",
    ["mode"],
)
REQUESTS = Counter("verifier_http_requests_total", "HTTP requests answered, by view.", ["view", "method", "status"])
LATENCY = Histogram("verifier_http_request_duration_seconds", "Time to answer a request, by view.", ["view"])


def verifications_counted(statuses: Iterable[str], *, source: str) -> None:
    for status, count in Tally(statuses).items():
        VERIFICATIONS.labels(status=status, source=source).inc(count)


def bulk_rows_counted(statuses: Iterable[str]) -> None:
    statuses = list(statuses)
    BULK_ROWS.inc(len(statuses))
    verifications_counted(statuses, source="bulk")


def dns_queries_counted(outcomes: Iterable[str]) -> None:
    for outcome, count in Tally(outcomes).items():
        DNS_QUERIES.labels(outcome=outcome).inc(count)


def smtp_sessions_counted(outcomes: Iterable[str]) -> None:
    for outcome, count in Tally(outcomes).items():
        SMTP_SESSIONS.labels(outcome=outcome).inc(count)


def smtp_work_cut(cut: Tally[str]) -> None:
    for what, count in cut.items():
        SMTP_WORK_CUT.labels(what=what).inc(count)


def rows_failed(count: int, *, mode: str) -> None:
    ROWS_FAILED.labels(mode=mode).inc(count)


def verdicts_withheld(count: int, *, source: str) -> None:
    WITHHELD.labels(source=source).inc(count)


def callback_attempt_counted(*, ok: bool, permanent: bool) -> None:
    CALLBACK_ATTEMPTS.labels(outcome="delivered" if ok else "refused" if permanent else "failed").inc()


def request_counted(*, view: str, method: str, status: int, seconds: float) -> None:
    method = method if method in KNOWN_METHODS else "other"
    REQUESTS.labels(view=view, method=method, status=str(status)).inc()
    LATENCY.labels(view=view).observe(seconds)


KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
