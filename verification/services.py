"""Verification on request: look up (cache or engine), then charge, cache and record at once.

Single verify, the batch call and the portal all go through `verifications_charged`, so a
verification costs the same, is cached the same and refuses the same whichever door it came in by.
"""

from __future__ import annotations

import contextlib
import functools
import math
import time
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction

from accounts.models import Account, ApiKey
from accounts.spend_caps import cap_require, cap_spend
from billing.services import credits_require, credits_spend
from lib import metrics
from lib.errors import DomainError
from verification.deep import deep_verify_many
from verification.deep_requests import deep_request_slot
from verification.egresses import egresses_of_region
from verification.engine import Status, SubStatus, Verdict, verify_many
from verification.engine.egress import Egress
from verification.engine.modes import VALIDATION_MODES, ValidationMode
from verification.engine.sandbox import sandbox_verdicts
from verification.engine.syntax import normalise
from verification.guarantee import valid_answers_record
from verification.judging import region_closed, rows_judged
from verification.models import CachedVerdict, Objection
from verification.outcomes import verdicts_with_feedback
from verification.resolution import retried_open
from verification.resolver import domain_lookup, resolver_broken


class DeepModeDisabled(DomainError):
    code = "deep_mode_disabled"
    param = "validation_mode"
    message = "Deep validation is not available yet."


def mode_require(mode: object, *, sandbox: bool = False) -> ValidationMode:
    """The validation mode, checked: invalid_request for anything but fast or deep, DeepModeDisabled
    for `deep` while the operator has not turned it on, but for a test key's sandbox, which opens
    no SMTP session. The API, the portal and bulk all come here."""
    if mode not in VALIDATION_MODES:
        raise DomainError(f"validation_mode: {mode!r} is not one of fast, deep.", "validation_mode")
    if mode == ValidationMode.DEEP and not settings.VERIFIER_DEEP_MODE and not sandbox:
        raise DeepModeDisabled
    return ValidationMode(str(mode))


class AddressObjected(DomainError):
    code = "address_objected"
    param = "email"
    message = "The person at this address objected to its verification: no one may verify it here."


def objections_refuse(emails: Sequence[str], *, param: str) -> None:
    """AddressObjected for the first address whose person objected (docs/privacy.md): a single or
    batch verification of it is refused whole, before anything is judged, charged or stored."""
    objected = Objection.objects.among(emails)
    if objected:
        at = next(i for i, email in enumerate(emails) if email in objected)
        where = param if param == "email" else f"{param}[{at}]"
        raise AddressObjected(f"{where}: {AddressObjected.message}", param)


@dataclass(frozen=True, slots=True)
class Verification:
    """A verdict as one customer received it: from their cache or not, and how fast."""

    verdict: Verdict
    cached: bool
    response_time_ms: int
    charged: bool = True
    verification_id: str | None = None  # asked again later (verification/resolution.py)

    def to_dict(self) -> dict[str, Any]:
        # The shape VerificationResultSerializer documents, without its per-call cost.
        found = {**self.verdict.to_dict(), "cached": self.cached, "response_time_ms": self.response_time_ms}
        return found | {"verification_id": self.verification_id} if self.verification_id else found


Lookup = tuple[Verdict, bool]


def verifications_lookup(
    *,
    account: Account,
    emails: Collection[str],
    mode: ValidationMode = ValidationMode.FAST,
    egresses: tuple[Egress, ...] | None = None,
) -> dict[str, Lookup]:
    """The verdict of each normalised address and whether it came from this account's cache.

    Writes nothing. The addresses not in the cache go to the engine together: each distinct
    domain is looked up once, all concurrently (`verify_many`).
    """
    found = {email: (verdict, True) for email in emails if (verdict := _cached(account, email, mode)) is not None}
    missing = [email for email in emails if email not in found]
    fresh = _engine(missing, mode, egresses) if missing else []
    return found | {email: (verdict, False) for email, verdict in zip(missing, fresh, strict=True)}


def _engine(emails: list[str], mode: ValidationMode, egresses: tuple[Egress, ...] | None) -> list[Verdict]:
    if mode == ValidationMode.DEEP:
        return rows_judged(emails, functools.partial(deep_verify_many, egresses=egresses), mode=mode)
    return rows_judged(emails, lambda rows: verify_many(rows, domain_lookup()), mode=mode)


def _cached(account: Account, email: str, mode: ValidationMode) -> Verdict | None:
    return CachedVerdict.objects.fresh(account_id=account.pk, email=email, validation_mode=mode)


@contextmanager
def verifications_charged(
    *,
    account: Account,
    emails: Sequence[str],
    mode: str = ValidationMode.FAST,  # checked here (mode_require): as the request carried it
    live: bool = True,
    started: float | None = None,
    source: str = "api",
    key: ApiKey | None = None,
    callback_url: str = "",
    param: str = "email",
) -> Iterator[list[Verification]]:
    """Verify addresses for an account, answered in order: one credit per distinct address,
    cached or not. Raises DeepModeDisabled, AddressObjected (naming `param`) or InsufficientCredits
    (for the batch whole) first.
    An address judged `unknown` while our own resolver is broken costs nothing (`charged=False`),
    and so does every `unknown` when the operator made unknowns free (VERIFIER_CHARGE_UNKNOWN=0):
    nothing is taken for it, so the ledger and the key's caps see only what was charged.
    A deep answer `unknown` for a temporary reason gets a `verification_id` and is asked again
    later (verification/resolution.py); its resolution is announced to `callback_url`.

    DNS runs before the transaction, so no lock is held while waiting on the network. The
    results are yielded inside the transaction that charges and caches: what the caller writes
    in its `with` block commits with the charge or not at all. The API stores its idempotent
    reply there, so a charged request always has its replay and a replay is never charged.
    A test key (`live=False`) gets the sandbox's answers: no credit, no cache, no DNS.
    The calling API `key`'s spend caps count what it is charged (a test key's what it would be),
    in the same transaction; past a cap, KeySpendCapReached and nothing charged.
    """
    mode = mode_require(mode, sandbox=not live)
    normalised = [normalise(email) for email in emails]
    distinct = list(dict.fromkeys(normalised))
    objections_refuse(normalised, param=param)
    if key is not None:
        cap_require(key=key, amount=len(distinct))
    if not live:
        with _sandboxed(emails, mode, started, key) as results:
            yield results
        return
    credits_require(account=account, amount=len(distinct))
    egresses = egresses_of_region(account.probe_region) if mode == ValidationMode.DEEP else None
    with deep_request_slot(account_id=account.pk) if mode == ValidationMode.DEEP else contextlib.nullcontext():
        looked_up = verifications_lookup(account=account, emails=distinct, mode=mode, egresses=egresses)
    elapsed_ms = _elapsed_ms(started)
    withheld = {
        email
        for email, (verdict, cached) in looked_up.items()
        if not cached and (_our_fault(verdict) or region_closed(verdict, egresses))
    }
    free = withheld | {email for email, (verdict, _) in looked_up.items() if _free(verdict)}
    answered = _with_feedback(account, looked_up)
    with transaction.atomic():
        if key is not None:
            cap_spend(key=key, amount=len(distinct) - len(free))
        if len(distinct) > len(free):
            credits_spend(account=account, amount=len(distinct) - len(free), reference="verify")
        for verdict, cached in looked_up.values():
            if not cached:
                CachedVerdict.objects.store(account_id=account.pk, verdict=verdict)
        pairs = [(answered[email], email not in free) for email in distinct]
        valid_answers_record(account_id=account.pk, verdicts=(verdict for verdict, charged in pairs if charged))
        ids = retried_open(account=account, key=key, answered=pairs, callback_url=callback_url, source=source)
        yield [
            Verification(answered[email], looked_up[email][1], elapsed_ms, email not in free, ids.get(email))
            for email in normalised
        ]
    metrics.verifications_counted((verdict.status for verdict, _ in looked_up.values()), source=source)
    if withheld:
        metrics.verdicts_withheld(len(withheld), source=source)


def _with_feedback(account: Account, looked_up: dict[str, Lookup]) -> dict[str, Verdict]:
    """The verdicts as answered: reported outcomes applied on top of the cache's (never stored in it)."""
    emails = list(looked_up)
    verdicts = verdicts_with_feedback(account_id=account.pk, verdicts=[looked_up[email][0] for email in emails])
    return dict(zip(emails, verdicts, strict=True))


def _free(verdict: Verdict) -> bool:
    """An `unknown` answer, when the operator charges only for definitive ones (VERIFIER_CHARGE_UNKNOWN=0)."""
    return verdict.status is Status.UNKNOWN and not settings.VERIFIER_CHARGE_UNKNOWN


def _our_fault(verdict: Verdict) -> bool:
    """Free when the verdict is `unknown` by our fault, not the address's: our own resolver is broken
    (verification/canaries.py), or judging the address failed on our side (`verification_failed`)."""
    if verdict.sub_status is SubStatus.VERIFICATION_FAILED:
        return True
    return verdict.sub_status is SubStatus.DNS_TEMPORARY_FAILURE and resolver_broken()


@contextmanager
def _sandboxed(
    emails: Sequence[str], mode: ValidationMode, started: float | None, key: ApiKey | None
) -> Iterator[list[Verification]]:
    """The sandbox's answers, yielded in a transaction as the charged ones are (for the idempotent reply).

    Deep is answered too: the sandbox opens no SMTP session, so an integration can be built
    against deep mode's answers before the operator turns deep mode on.
    """
    verdicts = sandbox_verdicts(list(emails), mode)
    elapsed_ms = _elapsed_ms(started)
    with transaction.atomic():
        if key is not None:
            cap_spend(key=key, amount=len(set(map(normalise, emails))))
        yield [Verification(verdict, False, elapsed_ms, charged=False) for verdict in verdicts]


def _elapsed_ms(started: float | None) -> int:
    return math.ceil((time.perf_counter() - started) * 1000) if started is not None else 0


def verification_run(
    *, account: Account, email: str, mode: ValidationMode = ValidationMode.FAST, source: str = "api"
) -> Verification:
    """`verifications_charged` for one live address and a caller with nothing to write beside the
    charge (the portal): the same checks, charge and cache."""
    with verifications_charged(account=account, emails=[email], mode=mode, source=source) as results:
        return results[0]
