"""Idempotency-Key handling, shared by every POST that takes the header.

The key is looked at first, before any plan or credit check (docs/api.md, "The order of checks"): the retry
of a request that spent the last credit replays, it is never refused with 402.

A key is claimed by inserting a row (unique per account and key). A second request with the
key then finds the row: a different body is 422, a request still running is 409, a finished
one is replayed byte for byte. The view completes the claim inside the service's charging
transaction (`verifications_charged`, `job_submitted` yield there), so a charged request always
has its replay. A request that ends in an error deletes its row, so errors are never stored.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.http import HttpResponse
from django.utils import timezone

from accounts.models import Account, KeyMode
from apikit.exceptions import ApiError
from apikit.models import IdempotencyRecord
from apikit.views import IDEMPOTENCY_HEADER

HEADER = IDEMPOTENCY_HEADER
KEY_LIFETIME = timedelta(hours=24)
# A claim still "running" after this was left by a process that died: take it over.
ABANDONED_AFTER = timedelta(minutes=5)
_VALID_KEY = re.compile(r"[\x20-\x7e]{1,255}")


@dataclass
class Claim:
    """What `idempotency_claim` found: a replay to answer with, or the request's to run.

    Used as a context manager around the request's work: if the work raises, the claim is
    let go, so a retry after an error runs afresh (errors are never stored).
    """

    record: IdempotencyRecord | None = None
    replay: HttpResponse | None = None

    def __enter__(self) -> Claim:
        return self

    def complete(self, *, status: int, body: bytes, headers: dict[str, str]) -> None:
        """Store the reply to replay (no key sent: nothing to store). Call it in the charge's transaction."""
        if self.record is not None:
            self.record.complete(status=status, body=body, headers=headers)

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        if exc_type is not None and self.record is not None:
            IdempotencyRecord.objects.filter(pk=self.record.pk, state=IdempotencyRecord.State.RUNNING).delete()


def fingerprint(*parts: bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part)
    return digest.hexdigest()


def json_fingerprint(data: object) -> str:
    return fingerprint(json.dumps(data, sort_keys=True).encode())


def idempotency_claim(*, account: Account, key: str | None, fingerprint: str, key_mode: str = KeyMode.LIVE) -> Claim:
    """Claim `key` for this request, or find the response to replay. Raises 400/409/422.

    Keys are kept apart by key mode: a test key's request never replays a live one's, nor the reverse.
    """
    try:
        return Claim(record=claim(account=account, key=key, fingerprint=fingerprint, key_mode=key_mode))
    except _Replay as found:
        return Claim(replay=_replay_response(found.record))


class _Replay(Exception):
    def __init__(self, record: IdempotencyRecord) -> None:
        self.record = record


def _replay_response(record: IdempotencyRecord) -> HttpResponse:
    response = HttpResponse(bytes(record.response_body), status=record.response_status or 200)
    for name, value in record.response_headers.items():
        response[name] = value
    response["Idempotent-Replayed"] = "true"
    return response


def claim(
    *, account: Account, key: str | None, fingerprint: str, key_mode: str = KeyMode.LIVE
) -> IdempotencyRecord | None:
    if key is None:
        return None
    if not _VALID_KEY.fullmatch(key):
        raise ApiError(400, "invalid_request", f"{HEADER} must be 1-255 printable ASCII characters.", HEADER)
    for _ in range(3):
        now = timezone.now()
        try:
            with transaction.atomic():
                return IdempotencyRecord.objects.create(
                    account=account,
                    key_mode=key_mode,
                    key=key,
                    fingerprint=fingerprint,
                    created_at=now,
                    expires_at=now + KEY_LIFETIME,
                )
        except IntegrityError:
            existing = IdempotencyRecord.objects.filter(account=account, key_mode=key_mode, key=key).first()
        if existing is None:
            continue
        if existing.expires_at <= now or _abandoned(existing, now):
            IdempotencyRecord.objects.filter(pk=existing.pk, created_at=existing.created_at).delete()
            continue
        _refuse_or_replay(existing, fingerprint)
    raise ApiError(409, "idempotency_key_in_use", "A request with this Idempotency-Key is still being processed.")


def _abandoned(record: IdempotencyRecord, now: datetime) -> bool:
    return record.state == IdempotencyRecord.State.RUNNING and record.created_at < now - ABANDONED_AFTER


def _refuse_or_replay(existing: IdempotencyRecord, fingerprint: str) -> None:
    if existing.fingerprint != fingerprint:
        raise ApiError(
            422, "idempotency_key_reused", "This Idempotency-Key was already used with a different request.", HEADER
        )
    if existing.state == IdempotencyRecord.State.RUNNING:
        raise ApiError(409, "idempotency_key_in_use", "A request with this Idempotency-Key is still being processed.")
    raise _Replay(existing)
