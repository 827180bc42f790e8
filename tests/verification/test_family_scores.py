"""Scores per provider family (verification/engine/scores.py): the calibration bench's changes."""

from __future__ import annotations

from verification.engine.deep import deep_verdict
from verification.engine.dns import DomainAnswer, DomainStatus
from verification.engine.smtp_answers import Answer
from verification.engine.smtp_replies import Meaning, Reply
from verification.engine.syntax import parse
from verification.engine.verdict import Verdict, classify

ACCEPTED = Answer(Reply(250, "2.1.5 OK"), Meaning.ACCEPTED)
NO_MAILBOX = Answer(Reply(550, "5.1.1 no such user"), Meaning.NO_MAILBOX)


def fast(email: str, mx: str) -> Verdict:
    domain = email.split("@")[1]
    return classify(email, parse(email), DomainAnswer(domain, DomainStatus.MX, 300, (mx,)))


def deep(email: str, mx: str, *, catch_all: bool = False) -> Verdict:
    probe = ACCEPTED if catch_all else NO_MAILBOX
    return deep_verdict(fast(email, mx), ACCEPTED, probe, catch_all)


def test_a_fast_valid_answer_scores_its_familys_share_of_existing_mailboxes() -> None:
    assert fast("ann@gmail.com", "gmail-smtp-in.l.google.com").score == 91
    assert fast("ann@outlook.com", "outlook-com.olc.protection.outlook.com").score == 89
    assert fast("ann@yahoo.com", "mta5.am0.yahoodns.net").score == 81


def test_a_fast_valid_answer_elsewhere_keeps_the_plain_score() -> None:
    assert fast("ann@acme.com", "mx1.acme.com").score == 85


def test_a_deep_valid_answer_at_yahoo_scores_below_the_others_for_accept_then_bounce() -> None:
    assert deep("ann@yahoo.com", "mta5.am0.yahoodns.net").score == 89
    assert deep("ann@gmail.com", "gmail-smtp-in.l.google.com").score == 95
    assert deep("ann@acme.com", "mx1.acme.com").score == 95


def test_a_role_address_at_a_microsoft_tenant_scores_lowest_for_groups_refusing_outside_senders() -> None:
    assert fast("info@acme.com", "acme-com.mail.protection.outlook.com").score == 61
    assert deep("info@acme.com", "acme-com.mail.protection.outlook.com").score == 71
    assert fast("info@acme.com", "mx1.acme.com").score == 63
    assert deep("info@acme.com", "aspmx.l.google.com").score == 87


def test_a_catch_all_answer_scores_by_family_and_stays_risky() -> None:
    google = deep("ann@acme.com", "aspmx.l.google.com", catch_all=True)
    assert (google.status, google.sub_status, google.score) == ("risky", "catch_all", 95)
    assert deep("ann@acme.com", "acme-com.mail.protection.outlook.com", catch_all=True).score == 85
    assert deep("ann@acme.com", "mx1.acme.com", catch_all=True).score == 90


def test_a_refused_mailbox_scores_zero_in_every_family() -> None:
    for mx in ("mta5.am0.yahoodns.net", "aspmx.l.google.com", "mx1.acme.com"):
        verdict = deep_verdict(fast("ann@acme.com", mx), NO_MAILBOX, NO_MAILBOX, False)
        assert (verdict.sub_status, verdict.score) == ("mailbox_not_found", 0)
