"""Deep verification against real Postfix and Exim (README.md here): every case gets its expected
verdict through the public API, in the number of sessions the server's own log shows."""

from __future__ import annotations

import re
import time
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from django.utils import timezone

from jobs import tasks
from jobs.chunk_runs import DEEP_RETRY_ROUNDS
from jobs.models import Chunk
from tests.conftest import Persona
from tests.jobs.conftest import RunTasks
from tests.support.bulk_jobs import deep_upload, download, job_body
from tests.support.mta import GREYLIST_DELAY, RATE_LIMITED_JOB_SESSIONS, STARTUP_SECONDS, Exim, MtaLog, Postfix
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.mta, pytest.mark.usefixtures("on_mtas")]


class Case(NamedTuple):
    server: str
    case: str
    email: str
    expected: str  # status or status/sub_status
    sessions: int
    rcpts: int | None  # Postfix only


def matrix() -> list[Case]:
    """The rows of README.md's matrix table: the expectations are written there, beside the configuration."""
    text = (Path(__file__).parent / "README.md").read_text(encoding="utf-8")
    table = text.split("## The matrix", 1)[1].split("\n\n")[2]
    cases = []
    for row in table.splitlines()[2:]:
        server, listener, _, asked, expected, sessions, rcpts = (cell.strip() for cell in row.strip("|").split("|"))
        case = re.sub(r" \(.*\)$", "", listener)
        cases.append(
            Case(server, case, asked.strip("`"), expected, int(sessions), int(rcpts) if rcpts != "–" else None)
        )
    return cases


def deep(persona: Persona, email: str) -> str:
    response = persona.post_json("/v1/verify", {"email": email, "validation_mode": "deep"})
    assert response.status_code == 200, response.content
    body = response.json()
    return "/".join(part for part in (body["status"], body["sub_status"]) if part)


class Asked(NamedTuple):
    verdict: str
    sessions: int  # what the server's log shows
    mark: int  # where the log stood before


def asked(persona: Persona, server: Postfix | Exim, case: str, email: str, sessions: int = 1) -> Asked:
    """A deep verification of `email`, and the sessions it opened at the case's listener: read once
    the log shows the `sessions` expected (more are counted too, if the log has them by then)."""
    mark = server.log.mark()
    verdict = deep(persona, email)
    return Asked(verdict, server.log.sessions(case, mark, at_least=sessions), mark)


def server_of(case: Case, request: pytest.FixtureRequest) -> Postfix | Exim:
    server: Postfix | Exim = request.getfixturevalue(case.server.lower())
    return server


@pytest.mark.parametrize("case", matrix(), ids=lambda case: f"{case.server}-{case.email}")
def test_each_case_of_the_matrix_gets_its_verdict_in_its_sessions(
    owner: Persona, case: Case, request: pytest.FixtureRequest
) -> None:
    server = server_of(case, request)
    found = asked(owner, server, case.case if case.server == "Postfix" else "", case.email, case.sessions)
    assert (found.verdict, found.sessions) == (case.expected, case.sessions)
    if case.rcpts is not None:
        assert request.getfixturevalue("postfix").log.rcpts(case.case, found.mark) == case.rcpts


def test_the_matrix_has_every_case_of_its_table() -> None:
    assert len(matrix()) == 14 and {case.server for case in matrix()} == {"Postfix", "Exim"}


def test_starttls_is_taken_when_offered(owner: Persona, postfix: Postfix) -> None:
    found = asked(owner, postfix, "starttls", "alice@starttls.mtamatrix.net")
    assert (found.verdict, found.sessions) == ("valid", 1)
    assert len(postfix.log.lines("starttls", found.mark, "TLS connection established from")) == 1


def test_a_non_fqdn_helo_is_refused_and_the_address_is_smtp_blocked(
    owner: Persona, postfix: Postfix, settings: Any
) -> None:
    settings.VERIFIER_SMTP_HELO = "localhost"
    found = asked(owner, postfix, "helo", "alice@helo.mtamatrix.net")
    # One session, one RCPT: no catch-all probe after the refusal.
    assert (*found[:2], postfix.log.rcpts("helo", found.mark)) == ("unknown/smtp_blocked", 1, 1)
    assert postfix.log.lines("helo", found.mark, "Helo command rejected: need fully-qualified hostname")


def test_greylisted_by_postgrey_then_valid_once_its_delay_has_passed(owner: Persona, postfix: Postfix) -> None:
    assert asked(owner, postfix, "greylist", "alice@greylist.mtamatrix.net")[:2] == ("unknown/greylisted", 1)
    # Counted from the answer, not from before the request: postgrey saw the recipient before we got
    # it, however long a loaded machine took to ask, and it keeps its times in whole seconds.
    answered = time.monotonic()
    wait_until(lambda: time.monotonic() > answered + GREYLIST_DELAY + 1, "postgrey's delay to pass", GREYLIST_DELAY + 5)
    assert asked(owner, postfix, "greylist", "alice@greylist.mtamatrix.net")[:2] == ("valid", 1)


def test_a_refusal_of_one_egress_identity_is_asked_again_through_another_before_judging(
    owner: Persona, postfix: Postfix, settings: Any
) -> None:
    # A run's sessions take the egresses in turn from the second listed: 127.0.0.1 goes first.
    settings.VERIFIER_SMTP_EGRESS = "bind:127.0.0.2,bind:127.0.0.1"
    found = asked(owner, postfix, "egress", "alice@egress.mtamatrix.net", sessions=2)
    assert (found.verdict, found.sessions) == ("valid", 2)
    [refused] = postfix.log.lines("egress", found.mark, "NOQUEUE: reject")
    assert "[127.0.0.1]: 450 4.7.25 Client host rejected: cannot find your hostname" in refused
    assert len(postfix.log.lines("egress", found.mark, ": connect from unknown[127.0.0.2]")) == 1


def test_a_recipient_limit_is_met_with_a_new_transaction_in_the_same_session(owner: Persona, postfix: Postfix) -> None:
    emails = [f"user{i}@recipient-limit.mtamatrix.net" for i in range(5)]
    mark = postfix.log.mark()
    response = owner.post_json("/v1/verify/batch", {"emails": emails, "validation_mode": "deep"})
    assert response.status_code == 200, response.content
    assert {row["status"] for row in response.json()["data"]} == {"valid"}
    assert postfix.log.sessions("recipient-limit", mark, at_least=1) == 1
    # Five mailboxes and the probe, the mailboxes in one pipelined write: the third is refused 452
    # 4.5.3, and those after it with it; they are sent again after RSET, MAIL FROM, two a transaction
    # now that the limit is known (the fifth in a third transaction begun before it, the probe too).
    assert postfix.log.rcpts("recipient-limit", mark) == 9
    assert " mail=3 rcpt=8/9 rset=2 " in postfix.log.lines("recipient-limit", mark, "disconnect from")[0]


def test_a_hard_error_limit_cuts_the_session_and_the_rest_is_asked_in_another(
    owner: Persona, postfix: Postfix, settings: Any, run_tasks: RunTasks
) -> None:
    settings.VERIFIER_SMTP_MAX_CONNECTIONS_PER_HOST = 1  # one session takes every recipient
    mark = postfix.log.mark()
    with run_tasks():
        job_id = deep_upload(owner, [f"ghost{i}@error-limit.mtamatrix.net" for i in range(30)]).json()["id"]
    progress = job_body(owner, job_id)["progress"]
    assert progress == {"total": 30, "processed": 30, "valid": 0, "invalid": 30, "risky": 0, "unknown": 0}
    assert postfix.log.sessions("error-limit", mark, at_least=2) == 2
    assert postfix.log.lines("error-limit", mark, "too many errors")


def test_a_connection_rate_limit_at_the_banner_is_never_unreachable(owner: Persona, postfix: Postfix) -> None:
    """The third connection in the window gets "421 4.7.0 Error: too many connections" at the
    banner: the server answered, so the address is answered, or left unknown for a temporary
    reason and asked again later, never smtp_unreachable."""
    # Three mailboxes: an answer already known would open no session.
    answers = [deep(owner, f"user{i}@rate-limit.mtamatrix.net") for i in range(3)]
    assert answers[:2] == ["valid", "valid"]
    assert answers[2] == "valid" or (answers[2].startswith("unknown/") and answers[2] != "unknown/smtp_unreachable")


def test_a_hundred_row_job_under_a_connection_rate_limit_ends_definitive(
    owner: Persona, postfix: Postfix, run_tasks: RunTasks, settings: Any
) -> None:
    settings.VERIFIER_SMTP_GREYLIST_RETRY_SECONDS = 1  # a deferred chunk's next round (a schedule in production)
    mark = postfix.log.mark()
    with run_tasks():
        job_id = deep_upload(owner, [f"user{i}@rate-limit-job.mtamatrix.net" for i in range(100)]).json()["id"]
    rounds = 0
    while (body := job_body(owner, job_id))["status"] != "completed" and rounds <= DEEP_RETRY_ROUNDS:
        wait_until(lambda: round_due(job_id), "the deferred round", STARTUP_SECONDS)
        with run_tasks():
            tasks.run_next_chunk()
        rounds += 1
    sessions = postfix.log.sessions("rate-limit-job", mark)
    rows = download(owner, body["result_download_url"])
    verdicts = Counter("/".join(filter(None, row[1:3])) for row in rows[1:])
    assert verdicts == {"valid": 100}, f"{sessions} sessions"
    assert sessions <= RATE_LIMITED_JOB_SESSIONS, f"{sessions} sessions in {rounds} deferred rounds"


def round_due(job_id: str) -> bool:
    """No chunk of the job waits for its next greylist round any more (its schedule would fire)."""
    return not Chunk.objects.filter(job_id=job_id, state=Chunk.State.PENDING, not_before__gt=timezone.now()).exists()


def test_a_log_counts_sessions_only_once_they_have_ended(tmp_path: Path) -> None:
    log = MtaLog(tmp_path / "maillog", r"{case} open", r"{case} close")
    log.path.write_text("x open\nx close\ny open\n")
    assert log.sessions("x", 0) == 1
    with pytest.raises(TimeoutError):
        log.sessions("y", 0, timeout=0.1)


def test_a_log_waits_for_the_sessions_a_caller_knows_were_opened(tmp_path: Path) -> None:
    log = MtaLog(tmp_path / "maillog", r"{case} open", r"{case} close")
    log.path.write_text("")
    assert log.sessions("x", 0) == 0  # none expected: an empty log is none
    with pytest.raises(TimeoutError):
        log.sessions("x", 0, timeout=0.1, at_least=1)  # the server has not written it yet
    log.path.write_text("x open\nx close\n")
    assert log.sessions("x", 0, at_least=1) == 1
