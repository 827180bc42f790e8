"""Bulk jobs: a submission's checks (plan, balance, file, callback URL, rows), then the job and its
chunks (cut by jobs/splitting.py). Previews are jobs/previews.py, estimates jobs/estimates.py;
running the chunks is jobs/worker.py and jobs/chunk_runs.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Required, TypedDict, Unpack

from django.core.files.uploadedfile import UploadedFile
from django.db import models, transaction

from accounts.models import Account, ApiKey, KeyMode
from accounts.spend_caps import cap_require, cap_spend
from billing.services import credits_require
from jobs import fair_share, files, grouping
from jobs.csvfile import MAX_ROWS, MAX_UPLOAD_BYTES, AddressList, CsvFileError, read_list
from jobs.estimates import estimated_seconds
from jobs.models import Chunk, Job, new_job_id
from jobs.splitting import chunk_size_for, chunks_for
from lib import outbound
from lib.errors import DomainError
from verification.engine.modes import ValidationMode
from verification.engine.syntax import parse
from verification.services import mode_require


class BulkNotInPlan(DomainError):
    code = "plan_upgrade_required"
    message = "Bulk verification needs the Starter plan or above."


class NoAddressesNotConfirmed(DomainError):
    """The portal asks before it runs a column that holds no address at all (each row would be charged as
    invalid syntax); the API does not."""

    param = "confirm_no_addresses"
    message = "The chosen column holds no email address: choose another column, or confirm to verify it anyway."


class PartialNotConfirmed(DomainError):
    """The portal asks before it runs a list the balance covers only in part; the API does not."""

    param = "confirm_partial"
    message = "Confirm that only part of the list will be verified, or add credits."


class UploadRefused(DomainError):
    """The upload itself is unusable: invalid_file, file_too_large, too_many_rows or invalid_callback_url."""

    param = "file"


@dataclass(frozen=True)
class Submission:
    """An accepted upload: the job and what its submitter was told."""

    job: Job
    estimated_seconds: int


def bulk_in_plan(*, account: Account) -> None:
    """Bulk needs the Starter plan or above (an upload and its preview both ask)."""
    if not account.plan.allows_bulk:
        raise BulkNotInPlan


def file_too_large() -> UploadRefused:
    return UploadRefused(f"The file is larger than {MAX_UPLOAD_BYTES // 2**20} MB.", code="file_too_large")


def _invalid_file(message: str) -> UploadRefused:
    return UploadRefused(message, code="invalid_file")


def _checked_file(upload: object) -> UploadedFile:
    if not isinstance(upload, UploadedFile):
        raise _invalid_file("Send the CSV file as the multipart part 'file'.")
    if upload.size is not None and upload.size > MAX_UPLOAD_BYTES:
        raise file_too_large()
    if not upload.size:
        raise _invalid_file("The file is empty.")
    return upload


def _checked_callback_url(url: object) -> str:
    try:
        return outbound.callback_url_checked(url)
    except outbound.UnsafeUrl as error:
        raise UploadRefused(str(error), "callback_url", code="invalid_callback_url") from None


@contextmanager
def job_submitted(
    *,
    account: Account,
    upload: object,
    callback_url: object,
    email_column: str | None = None,
    partial_ok: bool = True,
    no_addresses_ok: bool = True,
    validation_mode: object = ValidationMode.FAST,
    key_mode: str = KeyMode.LIVE,
    key: ApiKey | None = None,
    notify_email: str = "",
    retention_days: int | None = None,
) -> Iterator[Submission]:
    """Check an upload and create its job. The API and the portal both come in here.
    `notify_email`: who is mailed when the job finishes (the portal's opt-in; blank: nobody).

    Refusals, in the order docs/api.md gives: plan, balance, file, callback URL, then the file's
    rows, then (the portal's `no_addresses_ok=False`) a column holding no address and
    (`partial_ok=False`) a balance below the list's addresses.
    Each is a DomainError that changes nothing; the portal shows it on its field. The
    submission is yielded inside the transaction that creates the job (see `job_created`).
    A test job (`key_mode="test"`, a test key's) costs nothing, so the balance is not asked.
    The calling API `key`'s spend caps count the list's addresses when the job is made
    (docs/keys.md, "Spend caps"): a list bigger than what the key has left is refused whole.
    """
    mode = mode_require(validation_mode, sandbox=key_mode == KeyMode.TEST)
    bulk_in_plan(account=account)
    if key_mode == KeyMode.LIVE:
        credits_require(account=account, amount=1)
    found, url = upload_check(upload=upload, callback_url=callback_url, email_column=email_column)
    if not no_addresses_ok and invalid_syntax(found) == len(found.addresses):
        raise NoAddressesNotConfirmed
    if not partial_ok and account.credit_balance < len(found.addresses):
        raise PartialNotConfirmed
    if key is not None:
        cap_require(key=key, amount=len(found.addresses))
    filename = upload_filename(upload)
    with job_created(
        account=account,
        found=found,
        callback_url=url,
        filename=filename,
        mode=mode,
        key_mode=key_mode,
        notify_email=notify_email,
        retention_days=retention_days,
    ) as submission:
        if key is not None:
            cap_spend(key=key, amount=len(found.addresses))  # in the job's transaction: both or neither
        yield submission


class SubmitArgs(TypedDict, total=False):
    """`job_submitted`'s keyword arguments, for `job_submit` to pass on."""

    account: Required[Account]
    upload: Required[object]
    callback_url: Required[object]
    email_column: str | None
    partial_ok: bool
    no_addresses_ok: bool
    validation_mode: object
    notify_email: str
    retention_days: int | None


def job_submit(**kwargs: Unpack[SubmitArgs]) -> Submission:
    """`job_submitted` for a caller with nothing to write beside the job (the portal)."""
    with job_submitted(**kwargs) as submission:
        return submission


def credits_after_job(job: Job) -> int:
    """The account's balance once the job has taken its credits: what is left now, less the rows
    whose chunks have not reserved theirs yet (a test job takes none). X-Credits-Remaining on a bulk
    submission says this, "the balance after it", whichever chunks the workers already started."""
    balance = Account.objects.filter(pk=job.account_id).values_list("credit_balance", flat=True).get()
    if job.key_mode == KeyMode.TEST:
        return balance
    waiting = job.chunks.filter(reserved__isnull=True).aggregate(rows=models.Sum("size", default=0))["rows"]
    return max(balance - waiting, 0)


def invalid_syntax(found: AddressList) -> int:
    """How many of the list's unique values are not email addresses at all."""
    return sum(parse(address) is None for address in found.addresses)


def upload_check(*, upload: object, callback_url: object, email_column: str | None) -> tuple[AddressList, str]:
    """The file, the callback URL, then the file's rows (for the upload and its preview). Raises UploadRefused."""
    checked, url = _checked_file(upload), _checked_callback_url(callback_url)
    try:
        found = read_list(checked.file, email_column=email_column, max_rows=MAX_ROWS)  # type: ignore[arg-type]
    except CsvFileError as error:
        raise UploadRefused(error.message, error.param, code=error.code) from None
    return found, url


def upload_filename(upload: object) -> str | None:
    """The file's base name (any client-side folder dropped), at most 255 characters."""
    raw = upload.name if isinstance(upload, UploadedFile) else None
    name = PurePosixPath((raw or "").replace("\\", "/")).name
    return "".join(char for char in name if char.isprintable())[:255] or None  # no NUL, controls or surrogates


@contextmanager
def job_created(
    *,
    account: Account,
    found: AddressList,
    callback_url: str,
    filename: str | None = None,
    mode: ValidationMode = ValidationMode.FAST,
    key_mode: str = KeyMode.LIVE,
    notify_email: str = "",
    retention_days: int | None = None,
) -> Iterator[Submission]:
    """Store the addresses, create the job and its chunks, queue the chunks on commit.

    The submission is yielded inside the transaction that creates the job: what the caller writes
    in its `with` block (the API's idempotent reply) commits with the job or not at all. If anything
    fails, the stored file is deleted: nothing is left behind.
    """
    job_id, chunk_size = new_job_id(), chunk_size_for(len(found.addresses), mode=mode)
    name = files.input_save(job_id, found.addresses, found.originals, chunk_size, found.later_rows)
    try:
        with transaction.atomic():
            job = Job(
                id=job_id,
                account=account,
                callback_url=callback_url,
                input_name=name,
                total=len(found.addresses),
                filename=filename,
                columns=found.columns,
                validation_mode=mode,
                key_mode=key_mode,
                notify_email=notify_email,
                retention_days=retention_days,
            )
            grouped = grouping.needs_grouping(job)  # its chunks come once its rows are ordered by MX address
            job.grouping = Job.Grouping.DUE if grouped else Job.Grouping.NONE
            job.save(force_insert=True)
            if not grouped:
                Chunk.objects.bulk_create(chunks_for(job, chunk_size))
            tasks = 1 if grouped else fair_share.work_for_new_job(job.chunks.count())  # a deep worker groups it
            transaction.on_commit(lambda: fair_share.work_enqueue(tasks))
            yield Submission(job, estimated_seconds(job.total, addresses=found.addresses, mode=mode))
    except BaseException:
        files.input_delete(name)
        raise
