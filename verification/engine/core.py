"""Verify addresses: parse, look up each distinct domain once, classify."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence

from verification.engine.dns import DomainAnswer, DomainStatus
from verification.engine.syntax import normalise, parse
from verification.engine.verdict import Verdict, classify

DomainLookup = Callable[[Collection[str]], Mapping[str, DomainAnswer]]


def verify_many(raw_emails: Sequence[str], lookup: DomainLookup) -> list[Verdict]:
    """Verdicts in input order. Every distinct domain is looked up once, all concurrently."""
    emails = [normalise(raw) for raw in raw_emails]
    addresses = [parse(email) for email in emails]
    domains = {address.ascii_domain for address in addresses if address is not None}
    answers = lookup(domains) if domains else {}
    return [
        classify(email, address, answers[address.ascii_domain] if address else None)
        for email, address in zip(emails, addresses, strict=True)
    ]


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
