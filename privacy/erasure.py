"""Erasing addresses (docs/privacy.md, "Erasure"): for a customer, every trace its account holds;
for a person, by staff, that in every account and in the shared stores too."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from typing import Any

from django.db import models, transaction

from accounts.models import Account
from apikit.models import IdempotencyRecord
from billing.guarantee import answers_filed
from billing.models import ValidAnswer
from feedback.models import FeedbackEvent
from jobs import files
from jobs.downloads import original_ensure
from jobs.models import Job
from lib.address_keys import address_key, address_keys
from lib.errors import DomainError
from lib.text import MESSAGE as CONTROLS_MESSAGE
from lib.text import has_controls
from privacy.exports import exports_erasure
from verification.engine.syntax import normalise
from verification.models import CachedVerdict, CatchAllAnswer, MailboxAnswer, RetriedVerification

MAX_EMAILS = 1000
MAX_EMAIL_LENGTH = 1000


def emails_of(body: object) -> list[str]:
    """The distinct normalised addresses of `{"emails": [...]}`, 1 to 1,000 strings; DomainError
    (invalid_request, param `emails`) for anything else, before anything is erased."""
    emails = body.get("emails") if isinstance(body, dict) else None
    if not isinstance(emails, list) or not 1 <= len(emails) <= MAX_EMAILS:
        raise DomainError(f"emails: Must be a list of 1 to {MAX_EMAILS:,} addresses.", "emails")
    if not all(isinstance(email, str) and 0 < len(email.strip()) <= MAX_EMAIL_LENGTH for email in emails):
        raise DomainError(
            f"emails: Every item must be a non-blank string of at most {MAX_EMAIL_LENGTH} characters.", "emails"
        )
    # No store holds an address with a control character, and PostgreSQL refuses NUL in a query's text.
    if any(has_controls(email) for email in emails):
        raise DomainError(f"emails: {CONTROLS_MESSAGE}", "emails")
    return list(dict.fromkeys(normalise(email) for email in emails))


def erasure_for_account(*, account: Account | None, emails: Collection[str]) -> dict[str, int]:
    """Remove `emails` (normalised) from what `account` holds, or every account with None: its
    cached verdicts, reported outcomes, idempotent replies naming them, verifications being asked
    again, the charged valid answers kept for the guarantee, its finished jobs' rows of them (the
    files rewritten), and the ZIPs of its finished exports (a copy of those rows). How many of each
    went, by store."""
    emails = set(emails)
    with transaction.atomic():
        answers_filed(account.pk if account is not None else None)  # the answers of bulk chunks not yet filed
        stores = _stores(emails, account)
        holders = [account.pk] if account is not None else _holders(stores.values())
        erased = {store: rows.delete()[0] for store, rows in stores.items()}
        exports = exports_erasure(accounts=holders)
    erased["job_result_rows"] = _job_rows_erase(emails, account)
    erased["export_files"] = exports
    return erased


def _stores(emails: set[str], account: Account | None) -> dict[str, models.QuerySet[Any]]:
    """The rows of the addresses in each store an account holds, by the store's name in the answer."""
    keys = list(address_keys(emails))
    scope = {"account": account} if account is not None else {}
    return {
        "cached_verdicts": CachedVerdict.objects.filter(email__in=emails, **scope),
        "feedback_reports": FeedbackEvent.objects.filter(address_key__in=keys, **scope),
        "idempotent_replies": IdempotencyRecord.objects.filter(pk__in=_replies_naming(emails, scope)),
        # Deep answers asked again later (verification/resolution.py): their result names the address.
        "verifications_asked_again": RetriedVerification.objects.filter(result__email__in=emails, **scope),
        # Charged valid answers kept for the bounce guarantee (docs/guarantee.md): erased, they refund nothing.
        "valid_answers": ValidAnswer.objects.of_keys(keys).filter(**scope),
    }


def _holders(stores: Iterable[models.QuerySet[Any]]) -> list[int]:
    """The accounts with a row in one of the stores: a person's erasure withdraws their exports."""
    found = {pk for rows in stores for pk in rows.values_list("account_id", flat=True).distinct()}
    return sorted(pk for pk in found if pk is not None)


def _replies_naming(emails: set[str], scope: dict[str, Account]) -> list[int]:
    """Idempotent replies whose body names one of the addresses (kept 24 h: few to read)."""
    needles = [needle for email in emails for needle in {email.encode(), json.dumps(email)[1:-1].encode()}]
    records = IdempotencyRecord.objects.filter(**scope).values_list("pk", "response_body")
    return [pk for pk, body in records if any(n in bytes(body).lower() for n in needles)]


def _job_rows_erase(emails: set[str], account: Account | None) -> int:
    """Rows of the addresses in the finished jobs' files, rewritten without them. A completed job's
    original-columns file is assembled first, so no input or part file is left holding them; a failed
    job's leftover input and parts go. Counted in each job's result file."""
    jobs = Job.objects.filter(status__in=[Job.Status.COMPLETED, Job.Status.FAILED], files_expired_at__isnull=True)
    removed = 0
    for job in jobs.filter(account=account) if account is not None else jobs:
        if job.status == Job.Status.COMPLETED:
            original_ensure(job=job)
        names = files.job_files(job.pk)
        kept = [name for name in names if name in (job.result_name, job.original_name) or "/downloads/" in name]
        files.delete_quietly(*(name for name in names if name not in kept))
        for name in kept:
            gone = _rows_without(name, emails)
            removed += gone if name == job.result_name else 0
    return removed


def erasure_for_person(*, email: str) -> dict[str, int]:
    """Staff erase one person's address from every account and from the shared stores: deep mode's
    answer about the mailbox (by its key) and its domain's catch-all answer (a cache, asked again
    when needed: a person's own domain can say who they are)."""
    address = normalise(email)
    erased = erasure_for_account(account=None, emails=[address])
    erased["mailbox_answers"] = MailboxAnswer.objects.filter(address_key=address_key(address)).delete()[0]
    domain = address.rpartition("@")[2]
    erased["catch_all_answers"] = CatchAllAnswer.objects.filter(domain=domain).delete()[0] if domain else 0
    return erased


def _rows_without(name: str, addresses: Collection[str]) -> int:
    """Rewrite the CSV file `name` without the rows holding one of `addresses` (lower case) in a cell,
    formula-escaped or not; returns how many rows went (the header stays)."""
    rows = files.csv_rows(name)
    kept = rows[:1] + [row for row in rows[1:] if not any(_bare(cell) in addresses for cell in row)]
    if len(kept) < len(rows):
        files.csv_save(name, kept)
    return len(rows) - len(kept)


def _bare(cell: str) -> str:
    # A cell that starts like a formula was written with a leading quote (lib/csvcells.py).
    return cell.removeprefix("'").strip().lower()
