"""End to end under a connection rate limit: the 100-row deep job of `rate-limit-job` (Postfix,
`smtpd_client_connection_rate_limit = 2` per 60 s), uploaded over HTTP to a live stack whose two
real qcluster processes share one egress, ends with every row definitive in few sessions."""

from __future__ import annotations

import pytest

from tests.support.dns_server import DnsServer
from tests.support.mta import RATE_LIMITED_JOB_SESSIONS, Postfix
from tests.support.mta_stack import rate_limited_stack, run_job
from tests.support.stack_db import StackDatabases

pytestmark = [pytest.mark.mta, pytest.mark.e2e]


def test_a_hundred_row_job_run_by_two_qclusters_sharing_one_egress_ends_definitive_in_few_sessions(
    tmp_path_factory: pytest.TempPathFactory,
    dns_server: DnsServer,
    stack_databases: StackDatabases,
    fresh_postfix: Postfix,
) -> None:
    tmp = tmp_path_factory.mktemp("mta-stack")
    with rate_limited_stack(tmp, dns_server, stack_databases, fresh_postfix.port, qclusters=2) as stack:
        run = run_job(stack, fresh_postfix)
    assert run.verdicts == {"valid": 100}, run
    assert run.sessions <= RATE_LIMITED_JOB_SESSIONS, run
