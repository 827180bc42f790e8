"""End to end, a broken resolver: runserver and a real qcluster, the loopback DNS server switched
into NXDOMAIN, REFUSED and drop-everything modes and back to healthy. Jobs wait, judging nothing,
and complete with the right verdicts once it recovers; /readyz says `dns` meanwhile.

The finding is trusted one second here (VERIFIER_DNS_CANARY_SECONDS), not a minute, and DNS tries
are short, so each mode is seen at once; resuming waits for qcluster's scheduler (every 30 s).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
import requests

from jobs.queue import RESUME_SCHEDULE
from tests.jobs.conftest import Receiver
from tests.support.bulk_jobs import addresses
from tests.support.dns_server import MX, NXDOMAIN, REFUSED, SILENT, DnsServer
from tests.support.e2e_stack import Stack, live_stack, result_rows
from tests.support.stack_db import StackDatabases
from tests.support.waiting import wait_until

pytestmark = pytest.mark.e2e

RESOLVER_ENV = {"VERIFIER_DNS_CANARY_SECONDS": "1", "VERIFIER_DNS_TIMEOUT": "0.3", "VERIFIER_DNS_LIFETIME": "0.6"}


@pytest.fixture(scope="module")
def stack(
    tmp_path_factory: pytest.TempPathFactory, dns_server: DnsServer, stack_databases: StackDatabases
) -> Iterator[Stack]:
    with live_stack(tmp_path_factory.mktemp("e2e-resolver"), dns_server, stack_databases, **RESOLVER_ENV) as stack:
        yield stack


def real_addresses(dns_server: DnsServer, count: int) -> list[str]:
    """Each on a domain of its own that has MX records: `valid`, unless a lie is believed."""
    emails = addresses(count)
    for email in emails:
        domain = email.split("@")[1]
        dns_server.set(domain, MX(f"mx.{domain}"))
    return emails


def readyz(stack: Stack) -> tuple[int, dict[str, str]]:
    response = requests.get(f"{stack.base_url}/readyz", timeout=30)
    return response.status_code, response.json()["checks"]


def checked_broken(stack: Stack, dns_server: DnsServer) -> Callable[[], bool]:
    """Whether a check asked the DNS server since now, and /readyz says the resolver is broken."""
    asked = dns_server.queries

    def found() -> bool:
        status, checks = readyz(stack)
        return dns_server.queries > asked and status == 503 and checks["dns"].startswith("broken: every canary")

    return found


def reservations(stack: Stack, job_id: str) -> int:
    return int(stack.sql("SELECT COUNT(*) FROM billing_ledgerentry WHERE reference LIKE ?", f"{job_id}:%"))


def workers_stood_back(stack: Stack) -> Callable[[], bool]:
    """Every task the uploads queued was taken, and a worker that found the resolver broken left
    bulk work a one-off schedule to resume it (jobs/chunk_runs.py `waiting_for_resolver`)."""
    return lambda: (
        stack.database.tasks_waiting() == 0
        and bool(stack.sql("SELECT COUNT(*) FROM django_q_schedule WHERE name = ?", RESUME_SCHEDULE))
    )


def test_jobs_wait_in_every_broken_mode_and_complete_right_once_it_recovers(
    stack: Stack, receiver: Receiver, dns_server: DnsServer
) -> None:
    lists = {}
    for mode in (NXDOMAIN, REFUSED, SILENT):
        dns_server.everything = mode
        # A canary check asked under this mode (the finding of the one before has expired), and found it broken.
        wait_until(checked_broken(stack, dns_server), "a canary check under the new mode", 30, every=0.1)
        emails = ["jane@good.com", "x@nullmx.com", *real_addresses(dns_server, 40)]
        job = stack.upload(("email\n" + "\n".join(emails)).encode(), receiver.url)
        lists[job["id"]] = emails
    wait_until(workers_stood_back(stack), "the workers took the jobs' tasks and found the resolver broken", 30)
    for job_id in lists:
        body = stack.job(job_id)
        assert (body["status"], body["progress"]["processed"]) == ("pending", 0), body
        assert reservations(stack, job_id) == 0
    dns_server.everything = None
    for job_id, emails in lists.items():
        body = stack.wait_for(job_id, lambda b: b["status"] == "completed", timeout=90)
        assert body["progress"] | {"total": 42} == {
            "total": 42, "processed": 42, "valid": 41, "invalid": 1, "risky": 0, "unknown": 0
        }  # fmt: skip
        rows = result_rows(stack, body["result_download_url"])
        assert [row[0] for row in rows[1:]] == emails
        assert [row[1] for row in rows[1:3]] == ["valid", "invalid"]
    assert readyz(stack)[1]["dns"] == "ok"


def test_a_job_running_when_the_resolver_breaks_completes_with_right_verdicts(
    stack: Stack, receiver: Receiver, dns_server: DnsServer
) -> None:
    dns_server.delay = 0.05  # chunks of a fraction of a second: the switch lands mid-job
    emails = ["x@nullmx.com", *real_addresses(dns_server, 299)]
    job = stack.upload(("email\n" + "\n".join(emails)).encode(), receiver.url)
    stack.wait_for(job["id"], lambda b: b["progress"]["processed"] > 0, timeout=30)
    assert readyz(stack)[1]["dns"] == "ok"  # a fresh finding "healthy", trusted for a second more
    dns_server.everything = NXDOMAIN
    held = stack.wait_for(job["id"], lambda b: b["waiting_for"] == "dns_resolver", timeout=30)
    assert held["status"] == "processing" and held["progress"]["processed"] < 300, held
    dns_server.everything = None
    body = stack.wait_for(job["id"], lambda b: b["status"] == "completed", timeout=90)
    assert (body["progress"]["processed"], body["progress"]["valid"], body["progress"]["invalid"]) == (300, 299, 1)
    rows = result_rows(stack, body["result_download_url"])
    assert [row[0] for row in rows[1:]] == emails
    charged = stack.sql("SELECT SUM(amount) FROM billing_ledgerentry WHERE reference LIKE ?", f"{job['id']}:%")
    assert charged == -300
