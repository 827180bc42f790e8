"""A deep job's sessions per MX address are what its recipients need (docs/deep.md, "Bulk jobs"):
its rows are grouped by MX address across the job (a deep worker takes a batch of its chunks),
MX host names that differ but lead to one address included, so a job of 40 tenants on one address
opens 3 sessions, not 40, however many chunks hold them."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone
from django_q.models import OrmQ
from hypothesis import given
from hypothesis import strategies as st

from jobs import deep_slots, fair_share, files, grouping
from jobs.chunk_runs import chunk_claim, chunks_requeue_stale
from jobs.grouping import batches_of, job_group, job_group_next
from jobs.models import Chunk, Job
from jobs.worker import chunk_run_next
from tests.conftest import Persona
from tests.jobs.conftest import RunTasks, stored_files
from tests.support.bulk_jobs import deep_upload, download, job_body, upload_with_names
from tests.support.deep import CATCH_ALL, MAILBOX, hosted_on, tenants
from tests.support.dns_server import DnsServer
from tests.support.mx_farm import MxFarm
from tests.support.portal import logged_in
from verification.engine.smtp_scheduling import sessions_needed


def test_a_deep_jobs_sessions_per_mx_address_are_what_its_recipients_need(
    owner: Persona, deep_farm: MxFarm, _resolver_on_loopback: DnsServer, run_tasks: RunTasks
) -> None:
    domains = tenants(_resolver_on_loopback, 20)  # a host name per tenant, every one on the same address
    rows = [f"{local}@{domain}" for domain in domains for local in ("alice", "bob")]
    with run_tasks():
        job_id = deep_upload(owner, rows).json()["id"]
    body = job_body(owner, job_id)
    assert (body["status"], body["progress"]["valid"], body["progress"]["invalid"]) == ("completed", 20, 20)
    recipients = len(rows) + len(domains)  # and a catch-all probe a domain
    assert deep_farm.stats.sessions[MAILBOX] == sessions_needed(recipients, 3) == 3
    assert deep_farm.stats.peak[MAILBOX] <= 3


def test_an_mx_addresss_rows_in_many_chunks_share_its_sessions_and_keep_their_order(
    owner: Persona, settings: Any, deep_farm: MxFarm, _resolver_on_loopback: DnsServer, run_tasks: RunTasks
) -> None:
    # 40 rows: five chunks, every row on one MX address, one deep worker (with two, two batches: below)
    settings.BULK_DEEP_CHUNK_SIZE, settings.BULK_DEEP_WORKERS = 8, 1
    domains = tenants(_resolver_on_loopback, 20)
    rows = [f"{local}@{domain}" for local in ("alice", "bob") for domain in domains]
    with run_tasks():
        job_id = deep_upload(owner, rows).json()["id"]
    assert Chunk.objects.filter(job_id=job_id).count() == 5
    body = job_body(owner, job_id)
    assert (body["status"], body["progress"]["valid"], body["progress"]["invalid"]) == ("completed", 20, 20)
    # the whole job is one batch: its 40 recipients and 20 probes share 3 sessions, not 3 a chunk
    assert deep_farm.stats.sessions[MAILBOX] == sessions_needed(len(rows) + len(domains), 3) == 3
    assert deep_farm.stats.peak[MAILBOX] <= 3
    result = download(owner, body["result_download_url"])
    assert [row[0] for row in result[1:]] == rows  # input order, whatever order the sessions asked in
    status = result[0].index("status")
    assert [row[status] for row in result[1:]] == ["valid"] * 20 + ["invalid"] * 20


def test_a_deep_batch_stops_at_its_row_budget(
    owner: Persona, settings: Any, deep_farm: MxFarm, _resolver_on_loopback: DnsServer, run_tasks: RunTasks
) -> None:
    settings.BULK_DEEP_CHUNK_SIZE, settings.BULK_DEEP_BATCH_ROWS = 8, 16  # batches of two chunks: 16, 16, 8 rows
    domains = tenants(_resolver_on_loopback, 20)
    rows = [f"{local}@{domain}" for local in ("alice", "bob") for domain in domains]
    with run_tasks():
        job_id = deep_upload(owner, rows).json()["id"]
    assert job_body(owner, job_id)["status"] == "completed"
    # each batch its own sessions (a probe a domain not yet in the shared catch-all cache):
    # alice@tenant0-15 and 16 probes; alice@tenant16-19, bob@tenant0-11 and 4 probes; bob@tenant12-19
    needed = [sessions_needed(16 + 16, 3), sessions_needed(16 + 4, 3), sessions_needed(8, 3)]
    assert needed == [3, 2, 1] and deep_farm.stats.sessions[MAILBOX] == sum(needed)


def forty_rows_on_one_address(owner: Persona, settings: Any, dns: DnsServer) -> str:
    """A deep job of 40 rows on one MX address, larger than its batches of 16 rows (chunks of 8)."""
    settings.BULK_DEEP_CHUNK_SIZE, settings.BULK_DEEP_BATCH_ROWS = 8, 16
    rows = [f"{local}@{domain}" for local in ("alice", "bob") for domain in tenants(dns, 20)]
    return str(deep_upload(owner, rows).json()["id"])


def batch_taken() -> list[int]:
    """Claim the next batch as a deep worker does (jobs/worker.py); its chunks' indexes."""
    first = chunk_claim(chunk_id=fair_share.chunk_pick()[0])
    assert first is not None
    mates = [chunk_claim(chunk_id=pk) for pk in fair_share.deep_batch(first)]
    return [chunk.index for chunk in (first, *mates) if chunk is not None]


def test_a_second_deep_worker_takes_the_jobs_next_batch(
    owner: Persona, settings: Any, deep_farm: MxFarm, _resolver_on_loopback: DnsServer
) -> None:
    """A job larger than a batch is carried by more than one deep worker at once, a batch each."""
    job_id = forty_rows_on_one_address(owner, settings, _resolver_on_loopback)
    assert fair_share.chunk_pick() == []  # larger than a batch: no chunk until its rows are grouped
    assert job_group(job_id=job_id)  # one MX address's 40 rows: batches of 16, 16 and 8 rows, 5 chunks
    assert batch_taken() == [0, 1]
    assert batch_taken() == [2, 3]  # while the first is still running
    assert batch_taken() == [4]
    assert fair_share.chunk_pick() == []


def test_a_job_larger_than_a_batch_is_ordered_by_mx_address_so_each_address_is_asked_in_one_batch(
    owner: Persona,
    settings: Any,
    deep_farm: MxFarm,
    _resolver_on_loopback: DnsServer,
    run_tasks: RunTasks,
    media: Path,
) -> None:
    """Two MX addresses' rows alternate in the upload. Cut in upload order into batches of 24 rows,
    each address would be asked in both batches (5 sessions each: 3, then 2); ordered by MX address
    first, each address's 20 rows and 20 probes are one batch's, in the 3 sessions they need."""
    settings.BULK_DEEP_CHUNK_SIZE, settings.BULK_DEEP_BATCH_ROWS = 8, 24
    mailbox = tenants(_resolver_on_loopback, 20)
    catch_all = hosted_on(_resolver_on_loopback, CATCH_ALL, 20, "catchy")
    rows = [email for pair in zip(mailbox, catch_all, strict=True) for email in (f"alice@{pair[0]}", f"bob@{pair[1]}")]
    with run_tasks():
        job_id = upload_with_names(owner, rows)
    body = job_body(owner, job_id)
    assert (body["status"], body["progress"]["valid"], body["progress"]["risky"]) == ("completed", 20, 20)
    for address in (MAILBOX, CATCH_ALL):
        assert deep_farm.stats.sessions[address] == sessions_needed(20 + 20, 3) == 3, address
        assert deep_farm.stats.peak[address] <= 3
    # the chunks: each holds one address's rows, and a batch of chunks is one address
    batches = {chunk.batch for chunk in Chunk.objects.filter(job_id=job_id)}
    assert batches == {0, 1} and Job.objects.get(pk=job_id).grouping == Job.Grouping.DONE
    assert "data-deep-work" not in logged_in(owner).get(reverse("job", args=[job_id])).content.decode()  # done
    # both result files in input order, whatever order the chunks held the rows in
    result = download(owner, body["result_download_url"])
    status = result[0].index("status")
    assert [(row[0], row[status]) for row in result[1:]] == [
        (email, "valid" if email.startswith("alice@") else "risky") for email in rows
    ]
    response = owner.client.get(f"/v1/jobs/{job_id}/results?columns=original", headers=owner.auth({}))
    assert response.status_code == 302
    original = download(owner, response["Location"])
    assert original[0][:3] == ["email", "name", "verifier_email"]
    assert [row[:3] for row in original[1:]] == [[email, f"Name {n}", email] for n, email in enumerate(rows)]
    # once both result files exist, only they are kept: the grouped chunks' files went with the input
    kept = sorted(path.name.split("-")[0] for path in stored_files(media))
    assert kept == ["original", "result"]


def test_a_grouped_job_that_runs_out_of_credits_keeps_input_order_in_what_it_processed(
    owner: Persona, settings: Any, deep_farm: MxFarm, _resolver_on_loopback: DnsServer, run_tasks: RunTasks
) -> None:
    settings.BULK_DEEP_CHUNK_SIZE, settings.BULK_DEEP_BATCH_ROWS = 8, 24
    mailbox = tenants(_resolver_on_loopback, 20)
    catch_all = hosted_on(_resolver_on_loopback, CATCH_ALL, 20, "catchy")
    rows = [email for pair in zip(mailbox, catch_all, strict=True) for email in (f"alice@{pair[0]}", f"bob@{pair[1]}")]
    owner.account.credit_balance = 30
    owner.account.save(update_fields=["credit_balance"])
    with run_tasks():
        job_id = upload_with_names(owner, rows)
    body = job_body(owner, job_id)
    assert (body["status"], body["partial"], body["progress"]["processed"]) == ("completed", True, 30)
    result = [row[0] for row in download(owner, body["result_download_url"])[1:]]
    assert len(result) == 30 and set(result) <= set(rows)
    assert result == sorted(result, key=rows.index)  # the processed rows, in input order


def test_a_grouping_run_that_loses_to_another_leaves_nothing_behind(
    owner: Persona,
    settings: Any,
    deep_farm: MxFarm,
    _resolver_on_loopback: DnsServer,
    media: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two runs of one job's grouping (its first worker was thought dead): the first to record its
    folder creates the chunks, the other deletes its own folder and creates nothing."""
    settings.BULK_DEEP_CHUNK_SIZE, settings.BULK_DEEP_BATCH_ROWS = 8, 16
    job_id = deep_upload(owner, [f"alice@{domain}" for domain in tenants(_resolver_on_loopback, 20)]).json()["id"]
    save = files.grouped_save

    def another_run_wins_meanwhile(*args: Any) -> str:
        folder = save(*args)
        monkeypatch.setattr(files, "grouped_save", save)
        assert job_group(job_id=job_id)  # the other run, finishing first
        return folder

    monkeypatch.setattr(files, "grouped_save", another_run_wins_meanwhile)
    assert not job_group(job_id=job_id)
    job = Job.objects.get(pk=job_id)
    assert Chunk.objects.filter(job_id=job_id).count() == 3  # the winner's: 8, 8 and 4 rows
    grouped = {path.parent.name for path in stored_files(media) if path.parent.name.startswith("grouped-")}
    assert grouped == {job.grouped_name.rstrip("/").rsplit("/", 1)[1]}
    assert not job_group(job_id=job_id)  # and a run after it finds the job grouped


def test_a_grouping_whose_worker_died_is_taken_again_after_a_lease(
    owner: Persona, settings: Any, deep_farm: MxFarm, _resolver_on_loopback: DnsServer
) -> None:
    settings.BULK_DEEP_BATCH_ROWS = 16
    job_id = deep_upload(owner, [f"alice@{domain}" for domain in tenants(_resolver_on_loopback, 20)]).json()["id"]
    Job.objects.filter(pk=job_id).update(grouping_claimed_at=timezone.now())  # a worker took it, then died
    assert not job_group_next()  # its claim holds for a lease
    long_ago = timezone.now() - timedelta(seconds=settings.BULK_CHUNK_LEASE_SECONDS + 1)
    Job.objects.filter(pk=job_id, created_at__gt=long_ago).update(created_at=long_ago, grouping_claimed_at=long_ago)
    queued = OrmQ.objects.count()
    assert chunks_requeue_stale() == 1  # the task that would run it was lost with the worker: one is queued
    assert OrmQ.objects.count() == queued + 1
    assert job_group_next() and Job.objects.get(pk=job_id).grouping == Job.Grouping.DONE
    assert not job_group_next()  # and its chunks are the usual work now


def test_the_worker_kept_for_fast_jobs_never_groups(
    owner: Persona, settings: Any, deep_farm: MxFarm, _resolver_on_loopback: DnsServer
) -> None:
    """Grouping a large job takes seconds of DNS: only a worker holding a deep slot does it, so a
    fast job's worker is never taken by it."""
    settings.BULK_DEEP_BATCH_ROWS, settings.BULK_DEEP_WORKERS = 16, 1
    job_id = deep_upload(owner, [f"alice@{domain}" for domain in tenants(_resolver_on_loopback, 20)]).json()["id"]
    with deep_slots.deep_slot() as busy:  # the machine's one deep worker is busy with another job
        assert busy.held
        assert chunk_run_next(budget=0) == 0
        assert Job.objects.get(pk=job_id).grouping == Job.Grouping.DUE
    assert chunk_run_next(budget=0) == 1  # the slot free: the worker groups the job first
    assert Job.objects.get(pk=job_id).grouping == Job.Grouping.DONE


def test_a_job_within_one_batch_is_not_grouped_first(
    owner: Persona, deep_farm: MxFarm, _resolver_on_loopback: DnsServer
) -> None:
    job_id = deep_upload(owner, [f"alice@{domain}" for domain in tenants(_resolver_on_loopback, 5)]).json()["id"]
    job = Job.objects.get(pk=job_id)
    assert job.grouping == Job.Grouping.NONE and Chunk.objects.filter(job_id=job_id, batch=None).count() == 1


@given(st.lists(st.sampled_from(["", "a", "b", "c", "d", "e"]), max_size=80), st.integers(min_value=1, max_value=20))
def test_batches_hold_each_address_whole_when_it_fits(keys: list[str], budget: int) -> None:
    batches = batches_of(keys, budget)
    assert sorted(p for batch in batches for p in batch) == list(range(len(keys)))  # every row once
    assert all(0 < len(batch) <= budget and batch == sorted(batch) for batch in batches)
    for key in set(keys) - {""}:
        holding = [n for n, batch in enumerate(batches) if any(keys[p] == key for p in batch)]
        rows = keys.count(key)
        assert len(holding) == -(-rows // budget) if rows > budget else len(holding) == 1


def test_a_job_whose_ordering_fails_still_runs_in_upload_order(
    owner: Persona,
    settings: Any,
    deep_farm: MxFarm,
    _resolver_on_loopback: DnsServer,
    run_tasks: RunTasks,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The order only saves sessions: when working it out fails, the job's batches keep the upload's
    order (as before grouping existed), rather than the job waiting for an order forever."""
    settings.BULK_DEEP_CHUNK_SIZE, settings.BULK_DEEP_BATCH_ROWS = 8, 16

    def broken(*args: Any, **kwargs: Any) -> list[str]:
        raise RuntimeError("no order today")

    monkeypatch.setattr(grouping, "session_keys", broken)
    domains = tenants(_resolver_on_loopback, 20)
    rows = [f"{local}@{domain}" for local in ("alice", "bob") for domain in domains]
    with run_tasks():
        job_id = deep_upload(owner, rows).json()["id"]
    body = job_body(owner, job_id)
    assert (body["status"], body["progress"]["valid"], body["progress"]["invalid"]) == ("completed", 20, 20)
    chunks = Chunk.objects.filter(job_id=job_id).order_by("index")
    assert [(chunk.batch, chunk.size) for chunk in chunks] == [(0, 8), (0, 8), (1, 8), (1, 8), (2, 8)]
    assert [row[0] for row in download(owner, body["result_download_url"])[1:]] == rows


def test_a_grouped_jobs_row_whose_address_holds_a_line_break_keeps_its_place(
    owner: Persona, settings: Any, deep_farm: MxFarm, _resolver_on_loopback: DnsServer, run_tasks: RunTasks
) -> None:
    """A quoted cell may hold a line break, and such a value is a row like any other (invalid
    syntax): its result row spans two lines, and putting the rows back in input order must read
    CSV records, not lines."""
    settings.BULK_DEEP_CHUNK_SIZE, settings.BULK_DEEP_BATCH_ROWS = 8, 16
    rows = [f"alice@{domain}" for domain in tenants(_resolver_on_loopback, 20)]
    rows.insert(5, "broken\nline@deepfarm.net")
    # two rows repeat an address (the second, the broken one): every row comes back, each repeat naming its first
    uploaded = [*rows[:12], rows[1].upper(), *rows[12:], rows[5]]
    content = "email,name\n" + "".join(f'"{email}",Name {n}\n' for n, email in enumerate(uploaded))
    data = {"file": SimpleUploadedFile("list.csv", content.encode(), "text/csv"), "validation_mode": "deep"}
    with run_tasks():
        job_id = owner.client.post("/v1/verify/bulk", data=data, headers=owner.auth({})).json()["id"]
    body = job_body(owner, job_id)
    assert (body["status"], body["progress"]["processed"], body["progress"]["invalid"]) == ("completed", 21, 1)
    assert Job.objects.get(pk=job_id).grouping == Job.Grouping.DONE
    result = download(owner, body["result_download_url"])
    assert [row[0] for row in result[1:]] == rows
    response = owner.client.get(f"/v1/jobs/{job_id}/results?columns=original", headers=owner.auth({}))
    original = download(owner, response["Location"])
    firsts = {email.lower(): n + 2 for n, email in reversed(list(enumerate(uploaded)))}  # spreadsheet rows
    assert [row[:2] + row[-1:] for row in original[1:]] == [
        [email, f"Name {n}", "" if firsts[email.lower()] == n + 2 else str(firsts[email.lower()])]
        for n, email in enumerate(uploaded)
    ]
    assert [row[-1] for row in original[1:]].count("") == len(rows)


def test_the_job_page_says_a_large_deep_job_is_sorted_then_how_many_rows_mail_servers_are_asked(
    owner: Persona, settings: Any, deep_farm: MxFarm, _resolver_on_loopback: DnsServer
) -> None:
    """A batch's rows count as processed only when it ends: meanwhile the job page says what is under way."""
    job_id = forty_rows_on_one_address(owner, settings, _resolver_on_loopback)

    def notice() -> str:
        page = logged_in(owner).get(reverse("job-progress", args=[job_id])).content.decode()
        found = re.search(r'<p class="notice" data-deep-work="(\w+)"><strong>([^<]*)</strong>', page)
        return f"{found[1]}: {found[2]}" if found else ""

    assert notice() == "ordering: Sorting your list by mail server"
    assert job_group(job_id=job_id)
    assert notice() == ""  # its chunks wait for a deep worker: nothing under way
    assert batch_taken() == [0, 1]
    assert notice() == "checking: 16 rows are being checked with their mail servers now."
