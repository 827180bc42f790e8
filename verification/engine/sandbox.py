"""The sandbox that test keys (`ev_test_…`) verify in: fixed answers, no DNS, no SMTP.

`<name>@sandbox.example` answers as SANDBOX says, whatever the mode, so an integration can be
tested against every status and sub-status (deep mode's too) before going live. Any other
address is judged without DNS: syntax, then the throwaway and role lists, its domain taken to
have mail servers. README, "Test keys", and the portal's keys page (`sandbox_answers`) list the addresses.
"""

from __future__ import annotations

from dataclasses import replace

from verification.engine.dns import DomainAnswer, DomainStatus
from verification.engine.modes import ValidationMode
from verification.engine.syntax import normalise, parse
from verification.engine.verdict import Checks, Status, SubStatus, Verdict, classify

SANDBOX_DOMAIN = "sandbox.example"
# "The domain has mail", without hosts: the throwaway check then reads the lists only.
_HAS_MAIL = DomainAnswer(SANDBOX_DOMAIN, DomainStatus.MX, 86400)

# local part: (status, sub_status, confidence, score, checks that differ from a plain valid address)
_ANSWERS: dict[str, tuple[Status, SubStatus | None, str, int, dict[str, bool | None]]] = {
    "valid": (Status.VALID, None, "high", 85, {}),
    "invalid": (Status.INVALID, SubStatus.MAILBOX_NOT_FOUND, "high", 0, {"smtp_valid": False, "is_catch_all": False}),
    "no-mx": (Status.INVALID, SubStatus.NO_MX_RECORD, "high", 0, {"domain_valid": True, "mx_found": False}),
    "disposable": (Status.RISKY, SubStatus.DISPOSABLE, "high", 10, {"is_disposable": True}),
    "role": (Status.RISKY, SubStatus.ROLE_BASED, "medium", 50, {"is_role_based": True}),
    "unknown": (Status.UNKNOWN, SubStatus.DNS_TEMPORARY_FAILURE, "low", 30, {"domain_valid": False, "mx_found": False}),
    "disabled": (Status.INVALID, SubStatus.MAILBOX_DISABLED, "high", 0, {"smtp_valid": False, "is_catch_all": False}),
    "full": (Status.RISKY, SubStatus.MAILBOX_FULL, "medium", 40, {}),
    "catchall": (Status.RISKY, SubStatus.CATCH_ALL, "medium", 50, {"is_catch_all": True}),
    "greylisted": (Status.UNKNOWN, SubStatus.GREYLISTED, "low", 30, {}),
    "blocked": (Status.UNKNOWN, SubStatus.SMTP_BLOCKED, "low", 30, {}),
    "unreachable": (Status.UNKNOWN, SubStatus.SMTP_UNREACHABLE, "low", 30, {}),
    "utf8": (Status.UNKNOWN, SubStatus.SMTP_UTF8_UNSUPPORTED, "low", 30, {}),
    "failed": (Status.UNKNOWN, SubStatus.VERIFICATION_FAILED, "low", 30, {}),
    # A bulk row's answer for a person who objected (a live single verification of one answers 451).
    "objected": (Status.UNKNOWN, SubStatus.ADDRESS_OBJECTED, "low", 30, {}),
}
SANDBOX_ADDRESSES = tuple(f"{local}@{SANDBOX_DOMAIN}" for local in _ANSWERS)


def sandbox_answers() -> list[tuple[str, str]]:
    """Each sandbox address and its answer in words ("invalid, mailbox_not_found"), for people to read."""
    return [
        (f"{local}@{SANDBOX_DOMAIN}", ", ".join(filter(None, (status.value, sub_status and sub_status.value))))
        for local, (status, sub_status, *_) in _ANSWERS.items()
    ]


_VALID_CHECKS = Checks(
    syntax_valid=True,
    domain_valid=True,
    mx_found=True,
    smtp_valid=None,
    is_disposable=False,
    is_role_based=False,
    is_catch_all=None,
    is_free_provider=False,
)


def sandbox_verdicts(raw_emails: list[str], mode: ValidationMode = ValidationMode.FAST) -> list[Verdict]:
    """Verdicts in input order, as `verify_many` gives them, from the sandbox."""
    return [sandbox_verdict(raw, mode) for raw in raw_emails]


def sandbox_verdict(raw_email: str, mode: ValidationMode = ValidationMode.FAST) -> Verdict:
    email = normalise(raw_email)
    local, _, domain = email.rpartition("@")
    answer = _ANSWERS.get(local) if domain == SANDBOX_DOMAIN else None
    if answer is None:
        address = parse(email)
        verdict = classify(email, address, _HAS_MAIL if address else None)
        return replace(verdict, validation_mode=mode, mail_provider=None)
    status, sub_status, confidence, score, checks = answer
    return Verdict(
        email=email,
        is_valid=status is Status.VALID,
        status=status,
        sub_status=sub_status,
        validation_mode=mode,
        confidence=confidence,
        score=score,
        checks=replace(_VALID_CHECKS, **checks),  # type: ignore[arg-type]
    )
