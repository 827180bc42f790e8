"""One SMTP session on the wire (verification/engine/smtp.py over smtp_client.py), against scripted
servers: RCPTs pipelined (RFC 2920) where PIPELINING is offered and one at a time where it is not,
a transaction's recipient limit met partway through a pipelined group, a catch-all probe held back
until its domain's replies are read (and not sent when they already answer it), a greeting that
is not SMTP, and replies sent in clear behind STARTTLS's 220."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from tests.support.mx_farm import ACCEPT, MxFarm, Script
from verification.engine.deep import catch_all_of
from verification.engine.smtp import Session, SmtpConfig, run_session
from verification.engine.smtp_answers import Answer
from verification.engine.smtp_replies import PROBE_NOT_ASKED, PROBE_SPARED, Meaning, Reply, meaning

PIPELINING = "127.0.5.1"
ONE_AT_A_TIME = "127.0.5.2"
THREE_A_TRANSACTION = "127.0.5.3"
POLICY = "127.0.5.4"  # refuses every mailbox but alice and the probes by policy
NOT_SMTP = "127.0.5.5"
INJECTING = "127.0.5.6"  # sends a reply in clear behind STARTTLS's 220, to be read inside TLS
MAILBOXES = {"alice": ACCEPT, "bob": ACCEPT}
SCRIPTS = {
    PIPELINING: Script(mailboxes=MAILBOXES),
    ONE_AT_A_TIME: Script(mailboxes=MAILBOXES, pipelining=False),
    THREE_A_TRANSACTION: Script(others=ACCEPT, transaction_recipients=3),
    POLICY: Script(
        mailboxes={"alice": ACCEPT, "probe1": ACCEPT, "probe2": ACCEPT}, others="550 5.7.1 Recipient rejected by policy"
    ),
    NOT_SMTP: Script(banner="hello, this is no mail server"),
    INJECTING: Script(mailboxes=MAILBOXES, starttls=True, starttls_injected="550 5.1.1 injected before TLS"),
}
RECIPIENTS = ["alice@one.example", "bob@one.example", "carol@one.example", "dave@two.example"]


@pytest.fixture(scope="module")
def farm() -> Iterator[MxFarm]:
    with MxFarm(SCRIPTS) as running:
        yield running


def session(farm: MxFarm, address: str, recipients: list[str], probes: frozenset[str] = frozenset()) -> Session:
    farm.reset()
    config = SmtpConfig(helo="verifier.example", mail_from="check@verifier.example", port=farm.port, probes=probes)
    return asyncio.run(run_session(address, recipients, config))


def meanings(found: Session) -> dict[str, Meaning]:
    return {recipient: meaning(reply) for recipient, reply in found.answers.items()}


EXPECTED = {
    "alice@one.example": Meaning.ACCEPTED,
    "bob@one.example": Meaning.ACCEPTED,
    "carol@one.example": Meaning.NO_MAILBOX,
    "dave@two.example": Meaning.NO_MAILBOX,
}


def test_recipients_go_in_one_write_behind_mail_from_to_a_server_offering_pipelining(farm: MxFarm) -> None:
    found = session(farm, PIPELINING, RECIPIENTS)
    assert (found.failure, meanings(found)) == (None, EXPECTED)
    # MAIL FROM and the first three RCPTs were each answered with the next command already there.
    assert farm.stats.pipelined[PIPELINING] == len(RECIPIENTS)
    assert farm.stats.sessions[PIPELINING] == 1


def test_a_server_not_offering_pipelining_gets_one_command_at_a_time(farm: MxFarm) -> None:
    found = session(farm, ONE_AT_A_TIME, RECIPIENTS)
    assert (found.failure, meanings(found)) == (None, EXPECTED)
    assert farm.stats.pipelined[ONE_AT_A_TIME] == 0
    assert farm.stats.commands["RCPT"] == len(RECIPIENTS)


def test_recipients_past_a_transactions_limit_in_a_pipelined_group_are_sent_again_in_a_new_one(farm: MxFarm) -> None:
    recipients = [f"user{i}@limit.example" for i in range(7)]
    found = session(farm, THREE_A_TRANSACTION, recipients)
    assert found.failure is None
    assert meanings(found) == dict.fromkeys(recipients, Meaning.ACCEPTED)
    # Seven in the first write, three taken; the four refused 452 sent again, three a transaction
    # now that the limit is known: 7 + 3 + 1 RCPTs, in three transactions.
    assert farm.stats.commands["RCPT"] == 11
    assert (farm.stats.commands["MAIL"], farm.stats.commands["RSET"]) == (3, 2)
    assert farm.stats.sessions[THREE_A_TRANSACTION] == 1


@pytest.mark.parametrize(
    ("server", "first", "probe1", "probe2"),
    [
        # one.example's addresses refused by policy: its probe would be refused the same way
        (POLICY, "bob@one.example", PROBE_NOT_ASKED, Meaning.ACCEPTED),
        # carol@one.example refused as unknown: a server that does that is no catch-all
        (PIPELINING, "alice@one.example", PROBE_SPARED, Meaning.NO_MAILBOX),
    ],
)
def test_a_probe_waits_for_its_domains_replies_and_is_not_sent_when_they_answer_it(
    farm: MxFarm, server: str, first: str, probe1: Reply, probe2: Meaning
) -> None:
    recipients = [first, "carol@one.example", "probe1@one.example", "alice@two.example", "probe2@two.example"]
    found = session(farm, server, recipients, probes=frozenset({"probe1@one.example", "probe2@two.example"}))
    assert found.answers["probe1@one.example"] == probe1
    assert catch_all_of(Answer(probe1, meaning(probe1))) is (False if probe1 == PROBE_SPARED else None)
    assert meaning(found.answers["probe2@two.example"]) is probe2  # asked: two.example's address was accepted
    assert farm.stats.recipients == [first, "carol@one.example", "alice@two.example", "probe2@two.example"]


def test_a_greeting_that_is_not_smtp_ends_the_session_at_the_banner_unanswered(farm: MxFarm) -> None:
    found = session(farm, NOT_SMTP, RECIPIENTS)
    assert found.answers == {}
    assert found.failed_at == "banner" and found.failure is not None and found.failure.code == 0
    assert found.outcome == "unreachable"


def test_replies_sent_in_clear_behind_starttls_are_never_read_as_answers_inside_tls(farm: MxFarm) -> None:
    found = session(farm, INJECTING, RECIPIENTS)
    # Read inside TLS, the injected 550 would have answered EHLO and ended the session there, or
    # shifted every later reply by one.
    assert (found.failure, meanings(found)) == (None, EXPECTED)
    assert farm.stats.tls_sessions == 1
