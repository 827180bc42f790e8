"""Bulk jobs and a broken resolver (tasks run in this process): chunks wait, judging and reserving
nothing, and go on by themselves once it recovers; a chunk judged as it breaks is put back.
The same through a real qcluster: test_e2e_resolver.py."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone
from django_q.models import Schedule

from billing.models import LedgerEntry
from jobs import queue, tasks
from jobs.models import Chunk, Job
from tests.conftest import Persona, sandboxed
from tests.jobs.conftest import RunTasks, ledger_sum, upload
from tests.support.bulk_jobs import a_minute_later, bulk_net, csv_of, download, job_body
from tests.support.dns_server import NXDOMAIN, REFUSED, SILENT, Behaviour, DnsServer
from tests.support.portal import logged_in
from verification.resolver import resolver_health, resolver_last_finding

MODES = {"nxdomain for everything": NXDOMAIN, "refused for everything": REFUSED, "drops everything": SILENT}
# In chunks of two: the second chunk's domains have MX records, so a lie believed would show.
ADDRESSES = ["x@nowhere-at-all.com", "y@nullmx.com", "a@good.com", "b@company.com"]
VERDICTS = ["invalid", "invalid", "valid", "valid"]


def broken_job(owner: Persona, settings: Any, run_tasks: RunTasks, dns_server: DnsServer, mode: Behaviour) -> str:
    settings.BULK_CHUNK_SIZE = 2
    dns_server.everything = mode
    with run_tasks():
        return str(upload(owner, csv_of(ADDRESSES)).json()["id"])


@pytest.mark.parametrize("mode", MODES.values(), ids=MODES.keys())
def test_chunks_wait_judging_and_reserving_nothing_while_the_resolver_is_broken(
    owner: Persona, settings: Any, run_tasks: RunTasks, dns_server: DnsServer, mode: Behaviour
) -> None:
    job_id = broken_job(owner, settings, run_tasks, dns_server, mode)
    body = job_body(owner, job_id)
    assert (body["status"], body["progress"]["processed"]) == ("pending", 0)
    assert not LedgerEntry.objects.filter(reference__startswith=job_id).exists()
    assert set(Chunk.objects.filter(job_id=job_id).values_list("state", "attempts")) == {("pending", 0)}
    resume = Schedule.objects.get(name=queue.RESUME_SCHEDULE)
    assert resume.func == "jobs.tasks.resume_chunks"
    assert resume.next_run > timezone.now() + timedelta(seconds=50)


def test_the_job_goes_on_by_itself_once_the_resolver_recovers(
    owner: Persona, settings: Any, run_tasks: RunTasks, dns_server: DnsServer
) -> None:
    job_id = broken_job(owner, settings, run_tasks, dns_server, NXDOMAIN)
    dns_server.everything = None
    with a_minute_later(), run_tasks():
        tasks.resume_chunks()  # what the one-off schedule runs
    body = job_body(owner, job_id)
    assert (body["status"], body["progress"]["processed"], body["progress"]["invalid"]) == ("completed", 4, 2)
    rows = download(owner, body["result_download_url"])
    assert [(row[0], row[1]) for row in rows[1:]] == list(zip(ADDRESSES, VERDICTS, strict=True))
    assert bulk_net(owner, job_id) == -4
    owner.account.refresh_from_db()
    assert owner.account.credit_balance == 996 == ledger_sum(owner)


def test_resuming_while_still_broken_waits_again(
    owner: Persona, settings: Any, run_tasks: RunTasks, dns_server: DnsServer
) -> None:
    job_id = broken_job(owner, settings, run_tasks, dns_server, REFUSED)
    Schedule.objects.filter(name=queue.RESUME_SCHEDULE).delete()  # the scheduler ran it
    with a_minute_later(), run_tasks():
        tasks.resume_chunks()
    assert job_body(owner, job_id)["progress"]["processed"] == 0
    assert Schedule.objects.filter(name=queue.RESUME_SCHEDULE).count() == 1


def test_a_chunk_judged_as_the_resolver_breaks_is_put_back_and_judged_again_later(
    owner: Persona, settings: Any, run_tasks: RunTasks, dns_server: DnsServer
) -> None:
    settings.BULK_CHUNK_SIZE = 2
    job_id = upload(owner, csv_of(ADDRESSES)).json()["id"]
    first, second = Chunk.objects.filter(job_id=job_id).order_by("index")
    tasks.run_chunk(first.pk)  # the resolver is fine: judged and charged
    dns_server.everything = NXDOMAIN  # breaks while the finding "healthy" is still fresh
    tasks.run_chunk(second.pk)
    second.refresh_from_db()
    assert (second.state, second.attempts, second.reserved) == ("pending", 0, None)
    assert Job.objects.get(pk=job_id).processed == 2
    assert bulk_net(owner, job_id) == -2  # the second chunk's reservation was released
    dns_server.everything = None
    with a_minute_later(), run_tasks():
        tasks.resume_chunks()
    body = job_body(owner, job_id)
    assert (body["status"], body["progress"]["valid"], body["progress"]["invalid"]) == ("completed", 2, 2)
    rows = download(owner, body["result_download_url"])
    assert [(row[0], row[1]) for row in rows[1:]] == list(zip(ADDRESSES, VERDICTS, strict=True))
    assert bulk_net(owner, job_id) == -4


def test_the_job_says_it_waits_for_the_resolver_while_broken_and_stops_saying_so_once_it_runs(
    owner: Persona, settings: Any, run_tasks: RunTasks, dns_server: DnsServer
) -> None:
    job_id = broken_job(owner, settings, run_tasks, dns_server, NXDOMAIN)
    assert job_body(owner, job_id)["waiting_for"] == "dns_resolver"
    assert [job["waiting_for"] for job in owner.get("/v1/jobs").json()["data"]] == ["dns_resolver"]
    page = logged_in(owner).get(reverse("job", args=[job_id])).content.decode()
    assert (
        '<p class="notice notice-warning" data-waiting="dns_resolver"><strong>Waiting for our DNS resolver</strong>'
        in page
    )
    dns_server.everything = None
    with a_minute_later(), run_tasks():
        tasks.resume_chunks()
    assert job_body(owner, job_id)["waiting_for"] is None
    assert "data-waiting" not in logged_in(owner).get(reverse("job", args=[job_id])).content.decode()


def test_a_job_on_a_healthy_resolver_waits_for_nothing(owner: Persona, settings: Any, run_tasks: RunTasks) -> None:
    job_id = upload(owner, csv_of(ADDRESSES)).json()["id"]  # no task runs: it stays pending
    assert job_body(owner, job_id)["status"] == "pending"
    assert job_body(owner, job_id)["waiting_for"] is None
    assert "data-waiting" not in logged_in(owner).get(reverse("job", args=[job_id])).content.decode()


def test_a_chunk_with_nxdomain_answers_is_vouched_for_by_its_own_batch_not_a_canary_check(
    owner: Persona, settings: Any, run_tasks: RunTasks
) -> None:
    """The canary names go out in the chunk's own DNS batch: the finding of a minute stands, no check runs."""
    settings.BULK_CHUNK_SIZE = 2
    finding = resolver_health()
    with run_tasks():
        job_id = upload(owner, csv_of(ADDRESSES)).json()["id"]
    body = job_body(owner, job_id)
    assert (body["status"], body["progress"]["invalid"], body["progress"]["valid"]) == ("completed", 2, 2)
    assert finding is not None and resolver_last_finding() == finding


@pytest.mark.parametrize("mode", MODES.values(), ids=MODES.keys())
def test_a_test_keys_job_runs_while_the_resolver_is_broken_and_a_live_one_beside_it_waits(
    owner: Persona, settings: Any, run_tasks: RunTasks, dns_server: DnsServer, mode: Behaviour
) -> None:
    """The sandbox asks no resolver: its job goes on, even its made-up `unknown` (dns_temporary_failure) row."""
    live_id = broken_job(owner, settings, run_tasks, dns_server, mode)
    sandbox = sandboxed(owner)
    rows = ["valid@sandbox.example", "unknown@sandbox.example", "invalid@sandbox.example"]
    with run_tasks():
        test_id = upload(sandbox, csv_of(rows)).json()["id"]
    body = job_body(sandbox, test_id)
    assert (body["status"], body["progress"]["processed"], body["waiting_for"]) == ("completed", 3, None)
    result = download(sandbox, body["result_download_url"])
    assert [(row[0], row[1]) for row in result[1:]] == list(zip(rows, ["valid", "unknown", "invalid"], strict=True))
    live = job_body(owner, live_id)
    assert (live["status"], live["progress"]["processed"], live["waiting_for"]) == ("pending", 0, "dns_resolver")
