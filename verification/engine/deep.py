"""Deep verdicts: the table of docs/deep.md, from what the MX said about a mailbox and its domain.

The fast rules 1-4 (syntax, DNS failure, no MX, disposable) decide first and never reach here;
the role rule applies once the mailbox is known to exist.
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import date

from verification.engine import frozen
from verification.engine.modes import ValidationMode
from verification.engine.scores import family_score
from verification.engine.smtp_answers import Answer
from verification.engine.smtp_replies import Meaning
from verification.engine.verdict import Checks, Status, SubStatus, Verdict

# (status, sub_status, is_valid, confidence, score, smtp_valid) by the mailbox's answer.
_Outcome = tuple[Status, SubStatus | None, bool, str, int, bool | None]
_VALID: _Outcome = (Status.VALID, None, True, "high", 95, True)
_ROLE: _Outcome = (Status.RISKY, SubStatus.ROLE_BASED, False, "medium", 50, True)
_CATCH_ALL: _Outcome = (Status.RISKY, SubStatus.CATCH_ALL, False, "medium", 60, None)
_GREYLISTED: _Outcome = (Status.UNKNOWN, SubStatus.GREYLISTED, False, "low", 30, None)
_BLOCKED: _Outcome = (Status.UNKNOWN, SubStatus.SMTP_BLOCKED, False, "low", 30, None)
_UNREACHABLE: _Outcome = (Status.UNKNOWN, SubStatus.SMTP_UNREACHABLE, False, "low", 30, None)
_UTF8_UNSUPPORTED: _Outcome = (Status.UNKNOWN, SubStatus.SMTP_UTF8_UNSUPPORTED, False, "low", 30, None)
_BY_MEANING: dict[Meaning, _Outcome] = {
    Meaning.NO_MAILBOX: (Status.INVALID, SubStatus.MAILBOX_NOT_FOUND, False, "high", 0, False),
    Meaning.DISABLED: (Status.INVALID, SubStatus.MAILBOX_DISABLED, False, "high", 0, False),
    Meaning.FULL: (Status.RISKY, SubStatus.MAILBOX_FULL, False, "medium", 40, None),
    Meaning.TRY_AGAIN: _GREYLISTED,
    Meaning.TOO_MANY_RECIPIENTS: _GREYLISTED,
    Meaning.TOO_MANY_CONNECTIONS: _GREYLISTED,
    Meaning.BLOCKED: _BLOCKED,
    Meaning.UNREACHABLE: _UNREACHABLE,
    Meaning.UTF8_UNSUPPORTED: _UTF8_UNSUPPORTED,
}
# The catch-all probe's answer, once the address itself was accepted.
_PROBE_BLOCKS: dict[Meaning, _Outcome] = {
    Meaning.BLOCKED: _BLOCKED,
    Meaning.UNREACHABLE: _UNREACHABLE,
}


def probe_address(domain: str, key: bytes, today: date) -> str:
    """The catch-all probe: random-looking, but the same all day, so greylisting (keyed on
    sender, recipient and client) clears for it on a retry as it does for a real address."""
    digest = hmac.new(key, f"{domain}|{today.isoformat()}".encode(), hashlib.sha256).hexdigest()
    return f"{digest[:20]}@{domain}"


def catch_all_of(probe: Answer | None) -> bool | None:
    """True when the domain accepted the random address, False when it refused it as unknown."""
    if probe is None:
        return None
    if probe.meaning is Meaning.ACCEPTED:
        return True
    return False if probe.meaning in (Meaning.NO_MAILBOX, Meaning.DISABLED) else None


def is_settled(answer: Answer) -> bool:
    """Whether the answer is final: a 4xx (greylisting, "try again", "too busy") is asked again."""
    return answer.meaning not in (Meaning.TRY_AGAIN, Meaning.TOO_MANY_RECIPIENTS, Meaning.TOO_MANY_CONNECTIONS)


verdict_replaced = frozen.replacer(Verdict)
_checks_replaced = frozen.replacer(Checks)


def deep_verdict(fast: Verdict, answer: Answer, probe: Answer | None, catch_all: bool | None) -> Verdict:
    """The deep verdict of an address the fast rules 1-4 let through. `catch_all` is the
    domain's (cached or just probed); `probe` the probe's answer when it was asked now."""
    outcome = _outcome(fast, answer, probe, catch_all)
    status, sub_status, is_valid, confidence, score, smtp_valid = outcome
    decided = outcome not in (_GREYLISTED, _BLOCKED, _UNREACHABLE, _UTF8_UNSUPPORTED)
    checks = _checks_replaced(fast.checks, smtp_valid=smtp_valid, is_catch_all=catch_all if decided else None)
    return verdict_replaced(
        fast,
        status=status,
        sub_status=sub_status,
        is_valid=is_valid,
        confidence=confidence,
        score=family_score(score, provider=fast.mail_provider, mode=ValidationMode.DEEP, sub_status=sub_status),
        checks=checks,
        validation_mode=ValidationMode.DEEP,
    )


def _outcome(fast: Verdict, answer: Answer, probe: Answer | None, catch_all: bool | None) -> _Outcome:
    if answer.meaning is not Meaning.ACCEPTED:
        return _BY_MEANING[answer.meaning]
    if catch_all is True:
        return _CATCH_ALL
    if catch_all is False:
        return _ROLE if fast.sub_status is SubStatus.ROLE_BASED else _VALID
    # The catch-all answer is needed for a verdict: a probe not yet answered is like the address's own.
    if probe is not None and probe.meaning in _PROBE_BLOCKS:
        return _PROBE_BLOCKS[probe.meaning]
    return _GREYLISTED
