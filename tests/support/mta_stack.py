"""The 100-row deep job of tests/mta's `rate-limit-job` case (Postfix with
`smtpd_client_connection_rate_limit = 2`), run on a live stack (tests/support/e2e_stack.py) with
one or more real qcluster processes sharing one egress: the test of it and `bench/mta_rate_limit.py`
both start it from here."""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.deep import HELO, SENDER, farm_zone
from tests.support.dns_server import DnsServer
from tests.support.e2e_stack import Stack, live_stack, result_rows
from tests.support.mta import Postfix
from tests.support.stack_db import StackDatabases

CASE = "rate-limit-job"
DOMAIN = f"{CASE}.mtamatrix.net"
LISTENER = "127.0.3.13"  # tests/mta/postfix/master.cf
ROWS = [f"user{i}@{DOMAIN}" for i in range(100)]


@contextmanager
def rate_limited_stack(
    tmp: Path, dns: DnsServer, databases: StackDatabases, port: int, *, qclusters: int, chunk_rows: int = 50
) -> Iterator[Stack]:
    """A live stack in deep mode pointed at the MTAs' port, `qclusters` qcluster processes (of two
    workers each) sharing the one egress (127.0.0.1): through Redis when the stack has it, else
    through one lock directory."""
    farm_zone(dns, {DOMAIN: [LISTENER]})
    with live_stack(
        tmp,
        dns,
        databases,
        DEBUG="0",
        VERIFIER_DNS_CANARIES=DOMAIN,  # the loopback DNS may name nothing else (a bench starts it empty)
        VERIFIER_DEEP_MODE="1",
        VERIFIER_SMTP_HELO=HELO,  # fully qualified: with DEBUG off `localhost` refuses to start
        VERIFIER_SMTP_FROM=SENDER,
        VERIFIER_SMTP_PORT=str(port),
        VERIFIER_SMTP_TIMEOUT="10",
        VERIFIER_SMTP_ALLOW_PRIVATE_NETWORKS="1",
        VERIFIER_SMTP_LOCK_DIR=str(tmp / "smtp-slots"),
        VERIFIER_SMTP_GREYLIST_RETRY_SECONDS="1",  # a deferred chunk's next round comes soon
        BULK_CHUNK_LEASE_SECONDS="120",  # a chunk's sessions get half of it, as by default
        # Chunks of 50: two, each a batch of its own, which two qclusters (or two workers of one) take at once.
        BULK_DEEP_CHUNK_SIZE=str(chunk_rows),
        BULK_DEEP_BATCH_ROWS=str(chunk_rows),
        Q_TIMEOUT="150",
        Q_RETRY="160",
    ) as stack:
        for _ in range(qclusters - 1):
            stack.processes.start(sys.executable, "manage.py", "qcluster")
        yield stack


@dataclass(frozen=True)
class JobRun:
    seconds: float  # upload to completion
    verdicts: Counter[str]
    sessions: int  # connections Postfix's log shows at the case's listener, refused ones included


def run_job(stack: Stack, postfix: Postfix, timeout: float = 600) -> JobRun:
    mark = postfix.log.mark()
    started = time.monotonic()
    job = stack.upload("\n".join(ROWS).encode(), "", validation_mode="deep")
    body = stack.wait_for(job["id"], lambda b: b["status"] == "completed", timeout=timeout)
    seconds = time.monotonic() - started
    header, *rows = result_rows(stack, body["result_download_url"])
    status, sub_status = header.index("status"), header.index("sub_status")
    verdicts = Counter("/".join(filter(None, (row[status], row[sub_status]))) for row in rows)
    return JobRun(seconds, verdicts, postfix.log.sessions(CASE, mark))
