"""Verdicts: the rule table in the README ("Verify one address"), first matching rule wins."""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from verification.engine import disposable, frozen, lists, providers
from verification.engine.dns import DomainAnswer, DomainStatus
from verification.engine.modes import ValidationMode
from verification.engine.scores import family_score
from verification.engine.syntax import Address, rough_parts


class Status(StrEnum):
    VALID = "valid"
    INVALID = "invalid"
    RISKY = "risky"
    UNKNOWN = "unknown"


class SubStatus(StrEnum):
    INVALID_SYNTAX = "invalid_syntax"
    NO_MX_RECORD = "no_mx_record"
    DISPOSABLE = "disposable"
    ROLE_BASED = "role_based"
    DNS_TEMPORARY_FAILURE = "dns_temporary_failure"
    # Deep mode only (docs/deep.md).
    CATCH_ALL = "catch_all"
    MAILBOX_NOT_FOUND = "mailbox_not_found"
    MAILBOX_DISABLED = "mailbox_disabled"
    MAILBOX_FULL = "mailbox_full"
    GREYLISTED = "greylisted"
    SMTP_BLOCKED = "smtp_blocked"
    SMTP_UNREACHABLE = "smtp_unreachable"
    SMTP_UTF8_UNSUPPORTED = "smtp_utf8_unsupported"
    # Either mode: judging this one row failed on our side (logged); ask again later.
    VERIFICATION_FAILED = "verification_failed"
    # A bulk row whose person objected to being verified (docs/privacy.md): not judged, not charged.
    ADDRESS_OBJECTED = "address_objected"


DEEP_SUB_STATUSES = frozenset(
    {
        SubStatus.CATCH_ALL,
        SubStatus.MAILBOX_NOT_FOUND,
        SubStatus.MAILBOX_DISABLED,
        SubStatus.MAILBOX_FULL,
        SubStatus.GREYLISTED,
        SubStatus.SMTP_BLOCKED,
        SubStatus.SMTP_UNREACHABLE,
        SubStatus.SMTP_UTF8_UNSUPPORTED,
    }
)


@dataclass(frozen=True, slots=True)
class Checks:
    syntax_valid: bool
    domain_valid: bool
    mx_found: bool
    smtp_valid: bool | None
    is_disposable: bool
    is_role_based: bool
    is_catch_all: bool | None
    is_free_provider: bool


# A catch-all row is "likely to deliver" (bulk breakdown) at this estimate or above.
LIKELY_TO_DELIVER = 0.5


@dataclass(frozen=True, slots=True)
class Feedback:
    """The report a verdict followed: `outcome` (hard_bounce or delivered) and when it happened."""

    outcome: str
    occurred_at: datetime

    def to_dict(self) -> dict[str, str]:
        # The API's convention: UTC with a Z, to the second.
        return {"outcome": self.outcome, "occurred_at": self.occurred_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}


@dataclass(frozen=True, slots=True)
class Deliverability:
    """The estimated probability that a message to a catch-all address is delivered, from `basis` outcomes."""

    estimate: float
    basis: int

    def to_dict(self) -> dict[str, float | int]:
        return {"estimate": self.estimate, "basis": self.basis}

    @property
    def likely(self) -> bool:
        return self.estimate >= LIKELY_TO_DELIVER


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    # In the order of the API's response, which renders `to_dict()` as it is.
    email: str
    is_valid: bool
    status: Status
    sub_status: SubStatus | None
    validation_mode: str = ValidationMode.FAST
    confidence: str
    score: int
    checks: Checks
    did_you_mean: str | None = None
    mail_provider: str | None = None
    # What reported outcomes did (engine/deliverability.py): never stored in the verdict cache, added on each answer.
    feedback: Feedback | None = None
    deliverability: Deliverability | None = None

    @property
    def cache_seconds(self) -> int:
        """How long this verdict may be served from cache: 0 means never."""
        return _CACHE_SECONDS[self.status]

    def to_dict(self) -> dict[str, Any]:
        # Not dataclasses.asdict (a recursive deep copy): every verification renders this.
        data = {name: getattr(self, name) for name in _VERDICT_FIELDS}
        data["checks"] = {name: getattr(self.checks, name) for name in _CHECK_FIELDS}
        data["feedback"] = self.feedback.to_dict() if self.feedback else None
        data["deliverability"] = self.deliverability.to_dict() if self.deliverability else None
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Verdict:
        sub_status = data["sub_status"]
        return cls(
            email=data["email"],
            status=Status(data["status"]),
            sub_status=SubStatus(sub_status) if sub_status else None,
            is_valid=data["is_valid"],
            confidence=data["confidence"],
            score=data["score"],
            checks=Checks(**data["checks"]),
            did_you_mean=data.get("did_you_mean"),
            mail_provider=data.get("mail_provider"),
            validation_mode=data.get("validation_mode", ValidationMode.FAST),
        )


_VERDICT_FIELDS = tuple(f.name for f in fields(Verdict))
_CHECK_FIELDS = tuple(f.name for f in fields(Checks))
_CACHE_SECONDS = {Status.VALID: 24 * 3600, Status.RISKY: 24 * 3600, Status.INVALID: 3600, Status.UNKNOWN: 0}

# (status, sub_status, is_valid, confidence, score) for each rule of the contract's table.
_OUTCOMES: dict[SubStatus | None, tuple[Status, SubStatus | None, bool, str, int]] = {
    SubStatus.INVALID_SYNTAX: (Status.INVALID, SubStatus.INVALID_SYNTAX, False, "high", 0),
    SubStatus.DNS_TEMPORARY_FAILURE: (Status.UNKNOWN, SubStatus.DNS_TEMPORARY_FAILURE, False, "low", 30),
    SubStatus.NO_MX_RECORD: (Status.INVALID, SubStatus.NO_MX_RECORD, False, "high", 0),
    SubStatus.DISPOSABLE: (Status.RISKY, SubStatus.DISPOSABLE, False, "high", 10),
    SubStatus.ROLE_BASED: (Status.RISKY, SubStatus.ROLE_BASED, False, "medium", 50),
    None: (Status.VALID, None, True, "high", 85),
}


# A verdict's fields from is_valid to checks, in the dataclass's order (a test checks it).
_Outcome = tuple[bool, Status, SubStatus | None, str, str, int, Checks]


@dataclass(frozen=True, slots=True)
class DomainHalf:
    """What a verdict takes from its domain alone: worked out once per domain of a chunk (which shares
    a few domains among many rows), then joined to each row's local part by `judged`."""

    outcomes: tuple[_Outcome, _Outcome]  # [0] for a local part that is no role, [1] for a role's
    suggestion: str | None
    mail_provider: str | None


def classify(email: str, address: Address | None, answer: DomainAnswer | None) -> Verdict:
    """Apply the rules in order. `answer` is None only when `address` is None."""
    local, domain = (address.local, address.ascii_domain) if address else rough_parts(email)
    return judged(email, local, domain_half(domain, address is not None, answer))


def domain_half(domain: str, parsed: bool, answer: DomainAnswer | None) -> DomainHalf:
    """The domain's part of the rules, for an address that `parsed` (with its DNS `answer`) or not.
    Kept for the next chunks while the answer says the same (its TTL plays no part): a job's rows
    share a domain across many chunks."""
    if answer is None:
        return domain_half_of(domain, parsed, None, ())
    return domain_half_of(domain, parsed, answer.status, answer.mx_hosts)


def domain_prepared(domain: str) -> None:
    """Work out now what `domain_half` will need of the domain's name alone, before its DNS answer
    (while it is awaited)."""
    disposable.decided_by_name(domain)


@functools.lru_cache(maxsize=1 << 15)
def domain_half_of(domain: str, parsed: bool, status: DomainStatus | None, mx_hosts: tuple[str, ...]) -> DomainHalf:
    throwaway = bool(domain) and disposable.is_disposable(domain, mx_hosts)
    free = bool(domain) and lists.is_free_provider(domain)
    provider = providers.mail_provider(mx_hosts) if mx_hosts else None
    suggestion = lists.suggest_domain(domain) if domain else None
    return _half(_outcomes(parsed, status, throwaway, free, provider), suggestion, provider)


@functools.lru_cache(maxsize=1 << 10)
def _outcomes(
    parsed: bool, status: DomainStatus | None, throwaway: bool, free: bool, provider: str | None
) -> tuple[_Outcome, _Outcome]:
    """A domain half's two outcomes, which depend on its domain through these alone: a few hundred
    combinations at most, each worked out once rather than once a domain."""
    answer = DomainAnswer("", status) if status is not None else None
    decided = answer if parsed and answer is not None and answer.status is not DomainStatus.FAILURE else None
    exists, mx_found = (decided.exists, decided.mx_found) if decided is not None else (False, False)

    def outcome(role: bool) -> _Outcome:
        status, sub_status, is_valid, confidence, score = _OUTCOMES[
            _rule(parsed, answer, disposable=throwaway, role=role)
        ]
        checks = plain_checks(parsed, exists, mx_found, throwaway, role, free)
        scored = family_score(score, provider=provider, mode=ValidationMode.FAST, sub_status=sub_status)
        return (is_valid, status, sub_status, ValidationMode.FAST, confidence, scored, checks)

    return (outcome(False), outcome(True))


_half = frozen.builder(DomainHalf)


def judged(email: str, local: str, half: DomainHalf) -> Verdict:
    """A row's verdict: its domain's half joined to what its local part says (a role or not)."""
    return joined(email, local, is_role(local), half)


def is_role(local: str) -> bool:
    return bool(local) and lists.role_key(local) in lists.role_local_parts()


def joined(email: str, local: str, role: bool, half: DomainHalf) -> Verdict:
    """`judged`, for a local part already found to be a role or not (`is_role`)."""
    suggestion = half.suggestion
    did_you_mean = f"{local}@{suggestion}" if suggestion else None
    return _verdict(email, half.outcomes[role], did_you_mean, half.mail_provider)


# A Verdict built field by field at a mutable dataclass's cost (frozen.py; a test checks they agree).
_VerdictDraft = frozen.draft(Verdict)
assert _VERDICT_FIELDS[:8] == (
    "email",
    "is_valid",
    "status",
    "sub_status",
    "validation_mode",
    "confidence",
    "score",
    "checks",
)
assert _VERDICT_FIELDS[8:] == ("did_you_mean", "mail_provider", "feedback", "deliverability")


def _verdict(address: str, outcome: _Outcome, did_you_mean: str | None, mail_provider: str | None) -> Verdict:
    """`Verdict(...)` from a row's email, its outcome (the fields from is_valid to checks, in order),
    suggestion and provider; no feedback and no deliverability, which are added per answer. Its slots
    are set here rather than through the draft's __init__: one call fewer a row."""
    made = _new(_VerdictDraft)
    made.email = address
    made.is_valid, made.status, made.sub_status, made.validation_mode, made.confidence, made.score, made.checks = (
        outcome
    )
    made.did_you_mean, made.mail_provider, made.feedback, made.deliverability = did_you_mean, mail_provider, None, None
    made.__class__ = Verdict
    return made


_new = object.__new__


def rules_forget() -> None:
    """Forget what the rules worked out per domain, as a new worker process starts (the benchmark's rounds)."""
    domain_half_of.cache_clear()
    _outcomes.cache_clear()
    disposable.is_disposable.cache_clear()
    disposable.decided_by_name.cache_clear()
    providers.mail_provider.cache_clear()


def rules_load() -> None:
    """Read every list the rules consult, now: a bulk worker does at its start (jobs/apps.py), so that
    its first chunk does not spend a tenth of a second reading them (73,000 throwaway domains)."""
    lists.lists_load()
    disposable.disposable_domains()
    disposable.disposable_mx_hosts()
    disposable.decisions_load()
    providers.providers_load()


@functools.cache
def plain_checks(
    syntax_valid: bool, domain_valid: bool, mx_found: bool, disposable: bool, role: bool, free: bool
) -> Checks:
    """Checks are immutable and only 64 differ: one object each, rather than one built per row."""
    return Checks(
        syntax_valid=syntax_valid,
        domain_valid=domain_valid,
        mx_found=mx_found,
        smtp_valid=None,
        is_disposable=disposable,
        is_role_based=role,
        is_catch_all=None,
        is_free_provider=free,
    )


def _rule(parsed: bool, answer: DomainAnswer | None, *, disposable: bool, role: bool) -> SubStatus | None:
    if not parsed or answer is None:
        return SubStatus.INVALID_SYNTAX
    if answer.status is DomainStatus.FAILURE:
        return SubStatus.DNS_TEMPORARY_FAILURE
    if not answer.mx_found:
        return SubStatus.NO_MX_RECORD
    if disposable:
        return SubStatus.DISPOSABLE
    if role:
        return SubStatus.ROLE_BASED
    return None
