"""Every rule of verification/data/smtp_replies.txt, row by row, and the order they are read in."""

from __future__ import annotations

import pytest

from verification.engine.smtp_replies import Meaning, Reply, Rule, meaning, rules


def _sample(rule: Rule) -> Reply:
    """A reply this rule, and no earlier rule of another meaning, should take."""
    first = rule.pattern[0] if rule.kind == "code" else rule.reply_class
    reply_class = {"*": 5}.get(first, int(first) if first.isdigit() else 5)
    if rule.kind == "code":
        code = rule.pattern + "9" if rule.pattern.endswith(".") else rule.pattern
        return Reply(reply_class * 100 + 50, f"{code} reply from the farm")
    return Reply(reply_class * 100 + 50, f"Reply from the farm: {rule.pattern.upper()} (x)")


@pytest.mark.parametrize("rule", rules(), ids=lambda rule: f"{rule.meaning}:{rule.kind}:{rule.pattern}")
def test_each_rule_gives_its_meaning(rule: Rule) -> None:
    assert meaning(_sample(rule)) == rule.meaning


def test_the_file_has_a_rule_for_every_row_of_the_verdict_table() -> None:
    not_replies = {Meaning.ACCEPTED, Meaning.UNREACHABLE, Meaning.UTF8_UNSUPPORTED}
    assert {rule.meaning for rule in rules()} == set(Meaning) - not_replies


@pytest.mark.parametrize(
    ("code", "text", "expected"),
    [
        (250, "2.1.5 OK", Meaning.ACCEPTED),
        (251, "User not local; will forward", Meaning.ACCEPTED),
        (550, "5.1.1 <a@b.example>: Recipient address rejected: blocked using zen.spamhaus.org", Meaning.BLOCKED),
        (550, "5.7.1 No such user here, and you are not welcome", Meaning.BLOCKED),
        (550, "5.1.1 The email account that you tried to reach is disabled", Meaning.NO_MAILBOX),
        (
            450,
            "4.1.1 <a@b.example>: Recipient address rejected: User unknown in local recipient table",
            Meaning.TRY_AGAIN,
        ),
        (451, "4.7.1 Greylisting in action, please come back later", Meaning.TRY_AGAIN),
        (450, "4.7.1 Client host rejected: blocked using b.barracudacentral.org", Meaning.BLOCKED),
        (452, "4.5.3 Too many recipients", Meaning.TOO_MANY_RECIPIENTS),
        (452, "Insufficient system storage", Meaning.FULL),
        (552, "Requested mail action aborted", Meaning.FULL),
        (421, "mx.example Service not available, closing transmission channel", Meaning.TOO_MANY_CONNECTIONS),
        (421, "4.7.0 mx.example: Error: too many connections from 127.0.0.1", Meaning.TOO_MANY_CONNECTIONS),
        (421, "4.7.0 Try again later, closing connection.", Meaning.TOO_MANY_CONNECTIONS),
        (450, "4.7.1 Connection rate limit exceeded for 192.0.2.7", Meaning.TOO_MANY_CONNECTIONS),
        (451, "4.7.1 Recipient rate exceeded, throttled", Meaning.TOO_MANY_CONNECTIONS),
        (450, "4.2.0 Recipient address rejected: Greylisted, try again later", Meaning.TRY_AGAIN),
        (550, "5.7.1 Rate limit exceeded: you are blocked", Meaning.BLOCKED),
        (450, "Requested mail action not taken", Meaning.TRY_AGAIN),
        (550, "Requested action not taken", Meaning.NO_MAILBOX),
        (554, "Transaction failed", Meaning.BLOCKED),
        (500, "Syntax error, command unrecognised", Meaning.BLOCKED),
        (0, "timed out", Meaning.UNREACHABLE),
    ],
)
def test_precedence_and_fallbacks(code: int, text: str, expected: Meaning) -> None:
    assert meaning(Reply(code, text)) == expected


@pytest.mark.parametrize(
    "reply",
    [
        Reply(450, "4.7.25 Client host rejected: cannot find your hostname, [127.0.0.1]"),
        Reply(450, "4.7.1 Client host rejected: cannot find your reverse hostname, [127.0.0.1]"),
        Reply(451, "4.7.1 Cannot find your hostname; try again later"),
        Reply(450, "4.7.1 Cannot find your reverse hostname, try again later"),
        Reply(504, "5.5.2 <localhost>: Helo command rejected: need fully-qualified hostname"),
        Reply(450, "4.7.1 <localhost>: Helo command rejected: Host not found"),
        Reply(554, "5.7.1 <unknown[127.0.0.1]>: Client host rejected: Access denied"),
    ],
    ids=lambda reply: reply.text[:40],
)
def test_a_refusal_of_our_identity_is_blocked_never_greylisting_whatever_its_class(reply: Reply) -> None:
    """Postfix's own texts (reject_unknown_client_hostname, ..._reverse_client_hostname,
    reject_non_fqdn_helo_hostname, reject_unknown_helo_hostname, check_client_access), each rule's."""
    assert meaning(reply) == Meaning.BLOCKED


def test_greylisting_named_in_a_client_restriction_is_still_greylisting() -> None:
    reply = Reply(450, "4.2.0 <unknown[127.0.0.1]>: Client host rejected: Greylisted, see http://postgrey.example/")
    assert meaning(reply) == Meaning.TRY_AGAIN


def test_exims_unrouteable_address_is_no_mailbox() -> None:
    assert meaning(Reply(550, "Unrouteable address")) == Meaning.NO_MAILBOX


def test_a_refusal_before_rcpt_is_about_us_not_a_mailbox() -> None:
    assert meaning(Reply(550, "5.1.0 Sender rejected"), recipient=False) == Meaning.BLOCKED
    assert meaning(Reply(554, "No SMTP service here"), recipient=False) == Meaning.BLOCKED


def test_enhanced_code_is_read_only_at_the_start_of_the_text() -> None:
    assert Reply(550, "5.2.1 Mailbox disabled").enhanced == "5.2.1"
    assert Reply(550, "#5.1.1 bad").enhanced == "5.1.1"
    assert Reply(550, "Reply mentions 5.1.1 later").enhanced == ""
