"""Verify addresses: parse, look up each distinct domain once, classify."""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping, Sequence

from verification.engine.dns import DomainAnswer, DomainStatus
from verification.engine.modes import ValidationMode
from verification.engine.syntax import normalise, parse, rough_parts, split
from verification.engine.verdict import Status, SubStatus, Verdict, domain_half, domain_halves, judged, plain_checks

logger = logging.getLogger(__name__)

DomainLookup = Callable[[Collection[str]], Mapping[str, DomainAnswer]]


def verify_many(raw_emails: Sequence[str], lookup: DomainLookup) -> list[Verdict]:
    """Verdicts in input order. Every distinct domain is looked up once, all concurrently, and
    judged once (its `DomainHalf`); each row then adds what its local part says."""
    emails = list(map(normalise, raw_emails))
    parts = list(map(split, emails))
    domains = {part[1] for part in parts if part is not None}
    answers = lookup(domains) if domains else {}
    halves = domain_halves(domains, answers)
    return [
        judged(email, part[0], halves[part[1]]) if part is not None else _unparsed(email)
        for email, part in zip(emails, parts, strict=True)
    ]


def _unparsed(email: str) -> Verdict:
    local, domain = rough_parts(email)
    return judged(email, local, domain_half(domain, False, None))


def verify_one(raw_email: str, lookup: DomainLookup) -> Verdict:
    return verify_many([raw_email], lookup)[0]


def with_second_chance(lookup: DomainLookup) -> DomainLookup:
    """The lookup, then once more for the domains whose DNS failed, before they are judged
    unknown: a bulk job would otherwise charge for a verdict one bad second decided."""

    def lookup_twice(domains: Collection[str]) -> Mapping[str, DomainAnswer]:
        answers = dict(lookup(domains))
        failed = [domain for domain, answer in answers.items() if answer.status is DomainStatus.FAILURE]
        if failed:
            answers.update(lookup(failed))
        return answers

    return lookup_twice


Judge = Callable[[list[str]], list[Verdict]]


def verdicts_isolated(
    emails: list[str], judge: Judge, *, mode: ValidationMode, passthrough: tuple[type[BaseException], ...] = ()
) -> list[Verdict]:
    """`judge(emails)`, except that nothing one row holds can fail the others: when judging
    raises, the rows are judged again in halves down to the row at fault, which is answered
    `unknown` / `verification_failed` (logged). Exceptions in `passthrough` (an outage of our own
    database or cache) are no row's fault and propagate."""
    try:
        return judge(emails)
    except passthrough:
        raise
    except Exception:
        if len(emails) <= 1:
            logger.exception("judging one %s row failed; it is answered verification_failed", mode)
            return [failed_verdict(email, mode=mode) for email in emails]
    middle = len(emails) // 2
    return [
        *verdicts_isolated(emails[:middle], judge, mode=mode, passthrough=passthrough),
        *verdicts_isolated(emails[middle:], judge, mode=mode, passthrough=passthrough),
    ]


def failed_verdict(
    raw_email: str, *, mode: ValidationMode, sub_status: SubStatus = SubStatus.VERIFICATION_FAILED
) -> Verdict:
    """`unknown` / `verification_failed`: what judging this row found before it failed is not
    trusted, so every check says no more than its syntax (and that only when it can be read).
    Also the row left unjudged on purpose (`address_objected`), which says as little."""
    email = raw_email.strip().lower()
    try:
        syntax_valid = parse(normalise(raw_email)) is not None
    except Exception:
        syntax_valid = False
    checks = plain_checks(syntax_valid, False, False, False, False, False)
    return Verdict(
        email=email,
        is_valid=False,
        status=Status.UNKNOWN,
        sub_status=sub_status,
        validation_mode=mode,
        confidence="low",
        score=30,
        checks=checks,
    )
