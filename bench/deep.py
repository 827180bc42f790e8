"""Scenario ``deep``: deep (SMTP) verification, end to end, against an MX farm on loopback.

A fresh SQLite stack (gunicorn, one qcluster) with deep mode on, pointed at bench/mxfarm.py:
2,000 rows over 400 domains whose MX hosts sit on 100 loopback addresses (four domains each),
every SMTP reply 50 ms late. Clock: upload (validation_mode=deep) → signed callback, after a warm-up
(`_warm_up`: the processes' first use is not the measured job's). One second
after the deep upload, another account uploads a 50-row fast job: its upload → callback must stay
within 1 s. Then single deep verifications against an MX answering at once, p50 and p99, against
fast verifications of the same domain; 20,000 rows over 4,000 domains on the same 100 addresses;
and 40,000 rows over 8,000 domains, twice a batch, so ordered by MX address before it runs
(jobs/grouping.py). The farm reports the sessions opened and the most connections one address
had at once (never more than 3). Last, "two machines": the 2,000 rows on PostgreSQL and Redis with
two qclusters, each with a lock directory of its own, both sending from one egress
(bind:127.0.0.50): the farm must still count at most 3 at once per address. And the peer on the
same 2,000 rows, farm and DNS server: pigeontrust (asyncio), PEER_DOMAINS_AT_ONCE domains at once,
the most it can run while staying within 3 connections an address (_peer).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from typing import Any

import requests

from bench import bulk
from bench.mxfarm import INSTANT_DOMAIN, MAILBOXES, domain, farm_started
from bench.receiver import Receiver
from bench.results import Measurement, percentile
from bench.stack import Stack

ROWS, DOMAINS, ADDRESSES, DELAY_MS = 2000, 400, 100, 50
LARGE_ROWS, LARGE_DOMAINS = 20_000, 4_000
# Twice a batch (BULK_DEEP_BATCH_ROWS): ordered by MX address before it runs, each address in one batch.
LARGER_ROWS, LARGER_DOMAINS = 40_000, 8_000
SHARED_EGRESS = "bind:127.0.0.50"
SMALL_ROWS = 50
SINGLE_REQUESTS = 60
NO_RATE_LIMIT = "from accounts.models import Plan; Plan.objects.update(requests_per_second=10**6)"
DEEP_JOB = "2,000 rows, 400 domains on 100 MX addresses, replies 50 ms late: upload → callback"
FAST_BESIDE = "a 50-row fast job of another account during it: upload → callback"
SINGLE_DEEP = "single deep verify, MX answering at once"
SINGLE_FAST = "single fast verify, same domain"
DEEP_LARGE = "20,000 rows, 4,000 domains on the same 100 MX addresses: upload → callback"
DEEP_LARGER = "40,000 rows, 8,000 domains on the same 100 MX addresses (two batches): upload → callback"
DEEP_MACHINES = "2,000 rows, two qclusters (PostgreSQL, Redis) behind one egress: upload → callback"
DEEP_PEER = "pigeontrust 0.2.0, 100 domains at once, the same 2,000 rows: in-process call"
# Four domains share each address, one connection a domain: 100 at once never puts more than 3 on an
# address only by luck of the order; the farm reports the peak it really saw.
PEER_DOMAINS_AT_ONCE = 100


def rows(count: int = ROWS, domains: int = DOMAINS) -> bytes:
    """Five addresses a domain: the four mailboxes that exist and one that does not."""
    emails = [f"{local}@{domain(i)}" for i in range(domains) for local in (*MAILBOXES, "nobody")]
    return ("email\n" + "\n".join(emails[:count]) + "\n").encode()


def run() -> list[Measurement]:
    with farm_started("--addresses", ADDRESSES, "--domains", LARGER_DOMAINS, "--delay-ms", DELAY_MS) as farm:
        measured = _run(farm.dns, farm.smtp_port, farm.process)
        peer = _peer(farm.dns, farm.smtp_port, farm.process)
        ours = next(m for m in measured if m.case == DEEP_JOB)
        peer.extra["ours_faster_by"] = round(peer.seconds / ours.seconds, 2) if ours.seconds else None
        return [*measured, peer, _machines(farm.dns, farm.smtp_port, farm.process)]


def _farm_counts(farm: subprocess.Popen[str]) -> dict[str, int]:
    assert farm.stdin is not None and farm.stdout is not None
    farm.stdin.write("stats\n")
    farm.stdin.flush()
    return dict(json.loads(farm.stdout.readline()))


def _env(smtp_port: int) -> dict[str, str]:
    return {
        "VERIFIER_DEEP_MODE": "1",
        "VERIFIER_SMTP_PORT": str(smtp_port),
        "VERIFIER_SMTP_ALLOW_PRIVATE_NETWORKS": "1",
        "VERIFIER_SMTP_FROM": "verify@deepbench.net",
        # The stack runs with DEBUG off, which refuses `localhost` as the EHLO name with deep mode on.
        "VERIFIER_SMTP_HELO": "verifier.deepbench.net",
    }


def _run(dns_address: str, smtp_port: int, farm: subprocess.Popen[str]) -> list[Measurement]:
    with Stack("sqlite", dns_address, extra_env=_env(smtp_port)) as stack, Receiver() as receiver:
        deep_account = stack.create_account("deep@bench.example", credits=ROWS + LARGE_ROWS + LARGER_ROWS + 1000)
        stack.shell(NO_RATE_LIMIT)  # the single verifications run back to back
        fast_account = stack.create_account("fast@bench.example", credits=1000)
        stack.start_web(workers=2)
        stack.start_qcluster()
        time.sleep(bulk.WORKER_BOOT_SECONDS)
        _warm_up(stack, deep_account, receiver)
        _farm_counts(farm)  # reset
        deep_started = time.monotonic()
        deep_id = bulk.upload(stack, deep_account.api_key, rows(), mode="deep", callback_url=receiver.url)
        time.sleep(1.0)
        small = "".join(f"small{i}@fast{i % 10}.example\n" for i in range(SMALL_ROWS)).encode()
        small_started = time.monotonic()
        small_id = bulk.upload(stack, fast_account.api_key, small, mode="fast", callback_url=receiver.url)
        small_seconds = bulk._wait(stack, fast_account, receiver, small_id).arrived - small_started
        deep_seconds = bulk._wait(stack, deep_account, receiver, deep_id).arrived - deep_started
        counts = _farm_counts(farm)
        job = bulk._job(stack, deep_account, deep_id)
        singles = [_singles(stack, deep_account.api_key, mode) for mode in ("deep", "fast")]
        large = _job(stack, deep_account, receiver, farm, rows(LARGE_ROWS, LARGE_DOMAINS), DEEP_LARGE)
        larger = _job(stack, deep_account, receiver, farm, rows(LARGER_ROWS, LARGER_DOMAINS), DEEP_LARGER)
    errors = [] if counts["peak_per_address"] <= 3 else [f"{counts['peak_per_address']} connections to one address"]
    if job["progress"]["processed"] != ROWS or counts["data_commands"]:
        errors.append(f"processed {job['progress']}, DATA commands {counts['data_commands']}")
    extra = {
        "sessions": counts["sessions"],
        "peak_per_address": counts["peak_per_address"],
        "progress": job["progress"],
    }
    return [
        Measurement("deep", DEEP_JOB, "rows/s", ROWS / deep_seconds, ROWS, deep_seconds, extra=extra, errors=errors),
        Measurement("deep", FAST_BESIDE, "s", small_seconds, SMALL_ROWS, small_seconds),
        *singles,
        large,
        larger,
    ]


def _job(
    stack: Stack, account: Any, receiver: Receiver, farm: subprocess.Popen[str], content: bytes, case: str
) -> Measurement:
    """One deep job, upload → callback, with the farm's counts of its sessions."""
    _farm_counts(farm)  # reset
    count = content.count(b"\n") - 1
    started = time.monotonic()
    job_id = bulk.upload(stack, account.api_key, content, mode="deep", callback_url=receiver.url)
    seconds = bulk._wait(stack, account, receiver, job_id).arrived - started
    counts = _farm_counts(farm)
    progress = bulk._job(stack, account, job_id)["progress"]
    errors = [] if counts["peak_per_address"] <= 3 else [f"{counts['peak_per_address']} connections to one address"]
    if progress["processed"] != count or counts["data_commands"]:
        errors.append(f"processed {progress}, DATA commands {counts['data_commands']}")
    extra = {
        "sessions": counts["sessions"],
        "peak_per_address": counts["peak_per_address"],
        "progress": progress,
        # upload → its first chunk claimed: a job larger than a batch is ordered by MX address meanwhile
        "seconds_before_start": _seconds_before_start(stack, job_id),
    }
    return Measurement("deep", case, "rows/s", count / seconds, count, seconds, extra=extra, errors=errors)


def _seconds_before_start(stack: Stack, job_id: str) -> float:
    """From the database: the API's times are whole seconds."""
    job = f"Job.objects.get(pk={job_id!r})"
    code = f"from jobs.models import Job; j = {job}; print((j.started_at - j.created_at).total_seconds())"
    return round(float(stack.shell(code).strip().splitlines()[-1]), 2)


def _machines(dns_address: str, smtp_port: int, farm: subprocess.Popen[str]) -> Measurement:
    """Two qclusters standing for two machines (a lock directory each) behind one egress, sharing
    PostgreSQL and Redis: the leases in Redis keep the farm's count at 3 an address."""
    env = {**_env(smtp_port), "VERIFIER_SMTP_EGRESS": SHARED_EGRESS}
    with Stack("postgres", dns_address, extra_env=env) as stack, Receiver() as receiver:
        account = stack.create_account("machines@bench.example", credits=ROWS + 1000)
        stack.start_web(workers=2)
        for machine in range(2):
            stack.start_qcluster(VERIFIER_SMTP_LOCK_DIR=str(stack.tmp / f"machine-{machine}-smtp-slots"))
        time.sleep(bulk.WORKER_BOOT_SECONDS)
        _warm_up(stack, account, receiver)
        return _job(stack, account, receiver, farm, rows(), DEEP_MACHINES)


def _warm_up(stack: Stack, account: Any, receiver: Receiver) -> None:
    """Before the clock: a long-running service's processes have served requests and run jobs
    before, so the measured job should not pay a fresh process's first use (imports, connections,
    compiled patterns: about 0.3 s on the first upload a web worker takes and 0.2–0.4 s on a
    worker's first deep chunk, measured). A few previews reach the web workers' upload path, and a
    four-row deep job at the prompt MX (a domain no measured case uses) the worker's deep path."""
    for _ in range(4):
        requests.post(
            f"{stack.base_url}/v1/verify/bulk/preview",
            files={"file": ("warm.csv", b"email\nwarm@example.com\n", "text/csv")},
            headers={"Authorization": f"Bearer {account.api_key}"},
            timeout=60,
        ).raise_for_status()
    warm = ("email\n" + "".join(f"{local}@{INSTANT_DOMAIN}\n" for local in MAILBOXES)).encode()
    bulk._wait(
        stack, account, receiver, bulk.upload(stack, account.api_key, warm, mode="deep", callback_url=receiver.url)
    )


def _singles(stack: Stack, api_key: str, mode: str) -> Measurement:
    """Sequential single verifications of new addresses (never cached) at the prompt MX's domain."""
    latencies = []
    with requests.Session() as session:
        for n in range(SINGLE_REQUESTS):
            body = {"email": f"{mode}{n}.{time.monotonic_ns()}@{INSTANT_DOMAIN}", "validation_mode": mode}
            started = time.perf_counter()
            response = session.post(
                f"{stack.base_url}/v1/verify", json=body, headers={"Authorization": f"Bearer {api_key}"}, timeout=60
            )
            latencies.append((time.perf_counter() - started) * 1000)
            response.raise_for_status()
    seconds = sum(latencies) / 1000
    return Measurement(
        "deep",
        SINGLE_DEEP if mode == "deep" else SINGLE_FAST,
        "req/s",
        SINGLE_REQUESTS / seconds,
        SINGLE_REQUESTS,
        seconds,
        p50_ms=percentile(latencies, 50),
        p99_ms=percentile(latencies, 99),
    )


def _peer(dns_address: str, smtp_port: int, farm: subprocess.Popen[str]) -> Measurement:
    """pigeontrust on the same 2,000 rows, farm and DNS server, in this process. Its resolver is
    pointed at the loopback DNS server only; it connects to the host names an MX record gives it
    through the system's name lookup, so each MX host name is handed over already resolved (by the
    same DNS server) as its address: the system resolver is never asked."""
    import dns.asyncresolver
    import dns.nameserver
    from pigeontrust import AsyncPigeontrust
    from pigeontrust.resolver import MXResult

    host, port = dns_address.rsplit(":", 1)
    emails = rows().decode().splitlines()[1:]
    pigeon = AsyncPigeontrust(
        helo_host="verify.deepbench.net",
        from_address="verify@deepbench.net",
        smtp_port=smtp_port,
        max_workers=PEER_DOMAINS_AT_ONCE,
        dns_timeout=5.0,
        smtp_timeout=10.0,
        check_disposable=False,
        suggest_typos=False,
    )
    loopback = dns.asyncresolver.Resolver(configure=False)
    loopback.nameservers = [dns.nameserver.Do53Nameserver(host, int(port))]
    loopback.timeout = loopback.lifetime = 5.0
    pigeon.resolver._resolver = loopback  # its MX lookups: the loopback DNS server, never /etc/resolv.conf
    mx_lookup = pigeon.resolver.resolve

    async def resolved(domain: str) -> MXResult:
        found = await mx_lookup(domain)
        addresses: list[str] = []
        for name in found.hosts:
            answer = await loopback.resolve(name, "A", search=False)
            addresses.extend(record.to_text() for record in answer)
        return MXResult(found.status, hosts=tuple(addresses), detail=found.detail)

    pigeon.resolver.resolve = resolved  # type: ignore[method-assign]
    _farm_counts(farm)  # reset
    started = time.monotonic()
    results = asyncio.run(pigeon.averify_many(emails))
    seconds = time.monotonic() - started
    counts = _farm_counts(farm)
    right = sum(
        (result.verdict.value == "deliverable") == (email.split("@")[0] in MAILBOXES)
        for email, result in zip(emails, results, strict=True)
    )
    errors = [] if right == len(emails) else [f"{len(emails) - right} verdicts wrong"]
    extra = {"sessions": counts["sessions"], "peak_per_address": counts["peak_per_address"], "right": right}
    return Measurement(
        "deep", DEEP_PEER, "rows/s", len(emails) / seconds, len(emails), seconds, extra=extra, errors=errors
    )
