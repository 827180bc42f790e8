"""Verify addresses: parse, look up each distinct domain once, classify."""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import Protocol

from verification.engine.dns import DomainAnswer, DomainStatus, LookupMeanwhile
from verification.engine.lists import role_key, role_local_parts
from verification.engine.modes import ValidationMode
from verification.engine.syntax import normalise, parse, rough_parts, split
from verification.engine.verdict import (
    DomainHalf,
    Status,
    SubStatus,
    Verdict,
    domain_half,
    domain_half_of,
    domain_prepared,
    joined,
    judged,
    plain_checks,
)

logger = logging.getLogger(__name__)


class DomainLookup(Protocol):
    """Every domain's answer. While it waits on DNS it may do `meanwhile`'s work (dns.lookup_domains
    does); one that never waits may ignore it."""

    def __call__(
        self, domains: Collection[str], /, *, meanwhile: LookupMeanwhile | None = None
    ) -> Mapping[str, DomainAnswer]: ...


# Rows (or answers) taken in one step of the work done while DNS is awaited: a few tenths of a
# millisecond, so that the answers that come meanwhile are read soon after.
_ROWS_A_STEP = 256
_ANSWERS_A_STEP = 64


def verify_many(raw_emails: Sequence[str], lookup: DomainLookup) -> list[Verdict]:
    """Verdicts in input order. Every distinct domain is looked up once, all concurrently, and
    judged once (its `DomainHalf`); each row then adds what its local part says. While the lookup
    waits on DNS, the rows whose domains it knew already (cached) are judged, then what the others'
    verdicts need of their local parts and domain names alone is worked out, then each is judged
    as its domain's MX answer comes."""
    emails = list(map(normalise, raw_emails))
    parts = list(map(split, emails))
    domains = {part[1] for part in parts if part is not None}
    verdicts: list[Verdict | None] = [None] * len(emails)
    roles: list[bool | None] = [None] * len(emails)
    halves: dict[str, DomainHalf] = {}

    def meanwhile(known: Mapping[str, DomainAnswer], arriving: Sequence[DomainAnswer]) -> Iterator[bool]:
        return _judged_meanwhile(emails, parts, verdicts, roles, halves, known, arriving)

    answers = lookup(domains, meanwhile=meanwhile) if domains else {}
    key, role_keys = role_key, role_local_parts()  # `is_role`, without two calls a row
    half = domain_half_of
    for domain in domains:
        if domain not in halves:
            answer = answers[domain]
            halves[domain] = half(domain, True, answer.status, answer.mx_hosts)
    return [
        verdict
        if verdict is not None
        else _unparsed(email)
        if part is None
        else joined(
            email, part[0], bool(part[0]) and key(part[0]) in role_keys if role is None else role, halves[part[1]]
        )
        for verdict, email, part, role in zip(verdicts, emails, parts, roles, strict=True)
    ]


def _judged_meanwhile(
    emails: list[str],
    parts: list[tuple[str, str] | None],
    verdicts: list[Verdict | None],
    roles: list[bool | None],
    halves: dict[str, DomainHalf],
    known: Mapping[str, DomainAnswer],
    arriving: Sequence[DomainAnswer],
) -> Iterator[bool]:
    """What `verify_many` does while the lookup waits, a step at a time: the rows whose domains
    `known` answers for judged (each domain's half worked out once, kept in `halves`); for the
    others, whether their local parts are roles (`roles`) and what their domain names say; then
    those rows judged as their domains' MX answers are `arriving` (others are left to the end)."""
    half = domain_half_of
    for domain, answer in known.items():
        halves[domain] = half(domain, True, answer.status, answer.mx_hosts)
    yield True
    left: list[int] = []  # the rows whose domains are being looked up
    found = halves.get
    key, role_keys = role_key, role_local_parts()  # `is_role`, without two calls a row
    for start in range(0, len(emails), _ROWS_A_STEP):
        stop = start + _ROWS_A_STEP
        for row, email, part in zip(range(start, stop), emails[start:stop], parts[start:stop], strict=False):
            if part is None:
                continue
            if (domain_half := found(part[1])) is None:
                left.append(row)
            else:
                verdicts[row] = joined(email, part[0], bool(part[0]) and key(part[0]) in role_keys, domain_half)
        yield True
    rows_of: dict[str, list[int]] = {}
    for start in range(0, len(left), _ROWS_A_STEP):
        for row in left[start : start + _ROWS_A_STEP]:
            local, domain = parts[row]  # type: ignore[misc]  # a row in `left` has its parts
            roles[row] = bool(local) and key(local) in role_keys
            if (rows := rows_of.get(domain)) is None:
                rows_of[domain] = [row]
                domain_prepared(domain)
            else:
                rows.append(row)
        yield True
    seen = 0
    while rows_of:
        end = min(len(arriving), seen + _ANSWERS_A_STEP)
        for answer in arriving[seen:end]:
            if answer.status is DomainStatus.MX and (rows := rows_of.pop(answer.domain, None)) is not None:
                domain_half = halves[answer.domain] = half(answer.domain, True, answer.status, answer.mx_hosts)
                for row in rows:
                    verdicts[row] = joined(emails[row], parts[row][0], roles[row], domain_half)  # type: ignore[index,arg-type]
        seen = end
        # More to do now only if answers are left over; else the batch waits for the next ones, rather
        # than look at its sockets once more first (answers often come one or two at a time).
        yield seen < len(arriving)


def _unparsed(email: str) -> Verdict:
    local, domain = rough_parts(email)
    return judged(email, local, domain_half(domain, False, None))


def verify_one(raw_email: str, lookup: DomainLookup) -> Verdict:
    return verify_many([raw_email], lookup)[0]


def with_second_chance(lookup: DomainLookup) -> DomainLookup:
    """The lookup, then once more for the domains whose DNS failed, before they are judged
    unknown: a bulk job would otherwise charge for a verdict one bad second decided."""

    def lookup_twice(
        domains: Collection[str], /, *, meanwhile: LookupMeanwhile | None = None
    ) -> Mapping[str, DomainAnswer]:
        answers = dict(lookup(domains, meanwhile=meanwhile))
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
