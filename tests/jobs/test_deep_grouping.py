"""A deep job's sessions per MX address are what its recipients need (docs/deep.md, "Bulk jobs"):
its rows are grouped by MX address across the job's chunk, MX host names that differ but lead to
one address included, so a job of 40 tenants on one address opens 3 sessions, not 40."""

from __future__ import annotations

from tests.conftest import Persona
from tests.jobs.conftest import RunTasks
from tests.jobs.test_deep_jobs import deep_upload
from tests.jobs.test_processing import job_body
from tests.support.dns_server import HOST, MX, DnsServer
from tests.support.mx_farm import MxFarm
from verification.engine.smtp_scheduling import sessions_needed

MAILBOX = "127.0.0.2"  # alice exists, others do not


def test_a_deep_jobs_sessions_per_mx_address_are_what_its_recipients_need(
    owner: Persona, deep_farm: MxFarm, _resolver_on_loopback: DnsServer, run_tasks: RunTasks
) -> None:
    dns, domains = _resolver_on_loopback, [f"tenant{i}.grouped.net" for i in range(20)]
    for domain in domains:  # a host name per tenant, every one on the same address
        dns.set(domain, MX(f"{domain.replace('.', '-')}.mail.protection.grouped.net"))
        dns.set(f"{domain.replace('.', '-')}.mail.protection.grouped.net", HOST(MAILBOX))
    rows = [f"{local}@{domain}" for domain in domains for local in ("alice", "bob")]
    with run_tasks():
        job_id = deep_upload(owner, rows).json()["id"]
    body = job_body(owner, job_id)
    assert (body["status"], body["progress"]["valid"], body["progress"]["invalid"]) == ("completed", 20, 20)
    recipients = len(rows) + len(domains)  # and a catch-all probe a domain
    assert deep_farm.stats.sessions[MAILBOX] == sessions_needed(recipients, 3) == 3
    assert deep_farm.stats.peak[MAILBOX] <= 3
