"""An account's export (docs/privacy.md, "Export"): asking for one, finding it, its download and its
mailed link, and the end of its file. The ZIP itself is built by privacy/export_build.py in a worker.

An erasure (privacy/erasure.py) withdraws the finished exports of the accounts it touches, their ZIPs
deleted, and makes the ones in flight build again: see `exports_erasure`.

At most one export is in flight (queued or running) per account, held by a unique constraint: asking
again meanwhile answers the one in flight. One whose worker was lost (no heartbeat for STALE_AFTER,
or queued for QUEUED_AT_MOST) is failed, and a new one is made.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.core.files.storage import default_storage
from django.db import IntegrityError, models, transaction
from django.db.models import Value
from django.db.models.functions import Least
from django.db.models.signals import post_delete
from django.dispatch import receiver
from django.urls import reverse
from django.utils import timezone

from accounts.models import Account, ApiKey
from lib.errors import DomainError
from lib.signing import short_token, short_token_value
from lib.storage import folder_listing
from privacy import queue
from privacy.models import EXPORT_KEPT, AccountExport

logger = logging.getLogger(__name__)

IN_FLIGHT = (AccountExport.Status.QUEUED, AccountExport.Status.RUNNING)
# A running build writes its heartbeat every few thousand rows: this long without one, its worker is gone.
STALE_AFTER = timedelta(minutes=10)
# A queued export no worker took in this long was lost by the queue (a flushed Redis): asked again, it starts over.
QUEUED_AT_MOST = timedelta(hours=1)
WORKER_LOST = "its worker stopped before it finished; ask again"
_LINK_SALT = "privacy.export-link"
# An export finishing while another is asked for frees its place between the two looks: asked again this often.
ASKS = 3


class ExportNotFound(DomainError):
    code = "not_found"
    message = "No such export."


class ExportExpired(DomainError):
    code = "export_expired"
    message = "This export's download expired 24 hours after it was built, and its file was deleted: ask for a new one."


class ExportWithdrawn(ExportExpired):
    message = (
        "This export's file was deleted when addresses were erased from the account (it was a copy of rows the "
        "erasure removed): ask for a new one."
    )


class ExportNotReady(DomainError):
    code = "export_not_ready"

    def __init__(self, status: str) -> None:
        words = {"queued": "is queued", "running": "is still being built", "failed": "failed: ask for a new one"}
        super().__init__(f"This export {words.get(status, status)}; its ZIP can be downloaded once it is done.")


def export_request(*, account: Account, user: Any = None, key: ApiKey | None = None) -> tuple[AccountExport, bool]:
    """The export in flight for `account`, or a new one queued (True): one at a time."""
    _lost_fail(account)
    for _ in range(ASKS - 1):
        try:
            return _queued(account, user, key), True
        except IntegrityError:  # one in flight already (the constraint), maybe asked a moment ago
            in_flight = AccountExport.objects.filter(account=account, status__in=IN_FLIGHT).first()
            if in_flight is not None:
                return in_flight, False
            # It finished between our insert and our look: the place is free now, so ask again.
    return _queued(account, user, key), True


def _queued(account: Account, user: Any, key: ApiKey | None) -> AccountExport:
    with transaction.atomic():
        export = AccountExport.objects.create(
            account=account,
            requested_by=user if user is not None and user.is_authenticated else None,
            key_prefix=key.prefix if key is not None else "",
        )
        queue.export_build_on_commit(export.pk)
    return export


def _lost_fail(account: Account) -> None:
    now = timezone.now()
    lost = models.Q(status=AccountExport.Status.QUEUED, created_at__lt=now - QUEUED_AT_MOST) | models.Q(
        status=AccountExport.Status.RUNNING, heartbeat_at__lt=now - STALE_AFTER
    )
    AccountExport.objects.filter(lost, account=account).update(
        status=AccountExport.Status.FAILED, failure=WORKER_LOST, finished_at=now
    )


def export_of(account: Account, export_id: str) -> AccountExport:
    """The account's export `export_id`; ExportNotFound for any other (another account's too)."""
    export = AccountExport.objects.filter(account=account, pk=export_id).first()
    if export is None:
        raise ExportNotFound
    return export


def export_file(export: AccountExport, *, now: datetime) -> str:
    """The storage name of a done export's ZIP while its link is valid; ExportExpired or ExportNotReady else."""
    if export.status != AccountExport.Status.DONE:
        raise ExportNotReady(export.status)
    if export.is_expired(now):
        raise ExportWithdrawn if export.withdrawn_at is not None else ExportExpired
    return export.file_name


def download_name(export: AccountExport) -> str:
    return f"account-export-{export.created_at:%Y-%m-%d}-{export.pk}.zip"


def export_link(export: AccountExport) -> str:
    """The link mailed to the owner: signed (lib/signing.py), no key or session needed; the export's
    own expiry (24 h) decides whether it still downloads."""
    return settings.SITE_URL + reverse("account-export-link", args=[short_token(_LINK_SALT, export.pk)])


def export_by_link(token: str) -> AccountExport:
    """The export a mailed link names; ExportNotFound for a link we did not sign or a row since pruned."""
    export_id = short_token_value(_LINK_SALT, token, max_age=EXPORT_KEPT)
    export = AccountExport.objects.filter(pk=export_id).first() if export_id else None
    if export is None:
        raise ExportNotFound("This download link is unknown.")
    return export


def export_files_expire(*, now: datetime) -> int:
    """Delete the ZIPs of exports whose link has expired (the rows stay, `expired`, until pruned)."""
    due = AccountExport.objects.filter(link_expires_at__lte=now).exclude(file_name="")
    count = 0
    for export_id, name in due.values_list("pk", "file_name")[:500]:
        if AccountExport.objects.filter(pk=export_id, file_name=name).update(file_name=""):
            _file_delete(name)
            count += 1
    return count


# A ZIP in storage that no export names is an orphan once this old: its worker died between storing it
# and marking the export done (that takes milliseconds; the hour leaves every build in flight alone).
ORPHAN_AFTER = timedelta(hours=1)


def export_orphans_sweep(*, now: datetime) -> int:
    """Delete ZIPs under exports/ that no export names and that are over ORPHAN_AFTER old: a worker
    killed between storing its ZIP and marking the export done left them, and nothing else would
    ever delete them (the export is failed as lost, without a file name)."""
    names = [f"exports/{name}" for name in folder_listing("exports/")[1]]
    named = set(AccountExport.objects.filter(file_name__in=names).values_list("file_name", flat=True))
    orphans = [n for n in names if n not in named and default_storage.get_modified_time(n) < now - ORPHAN_AFTER]
    for name in orphans:
        _file_delete(name)
    return len(orphans)


def exports_erasure(*, accounts: Collection[int]) -> int:
    """An erasure's part, inside its transaction, for the accounts whose rows it removes: a ZIP built
    before it is a copy of rows that are gone, so every finished export's ZIP (its link valid or not
    yet swept) is deleted once the erasure is committed, the export shown `expired` with the reason
    (ExportWithdrawn); an export in flight is marked to be built again, which its worker does before
    calling it done (privacy/export_build.py). Returns how many ZIPs go."""
    scoped = AccountExport.objects.filter(account__in=accounts)
    # First the ones in flight: once marked, a build cannot be marked done (its UPDATE waits for this
    # transaction, then finds the mark); one done before it is then seen below, and withdrawn.
    scoped.filter(status__in=IN_FLIGHT).update(rebuild_needed=True)
    now = timezone.now()
    withdrawn = 0
    finished = scoped.filter(status=AccountExport.Status.DONE).exclude(file_name="")
    for export_id, name in finished.values_list("pk", "file_name"):
        if AccountExport.objects.filter(pk=export_id, file_name=name).update(
            file_name="", withdrawn_at=now, link_expires_at=Least("link_expires_at", Value(now))
        ):
            transaction.on_commit(partial(_file_delete, name))
            withdrawn += 1
    return withdrawn


def _file_delete(name: str) -> None:
    try:
        default_storage.delete(name)
    except OSError:  # the next sweep cannot find it either: logged, not retried
        logger.exception("could not delete the export file %s", name)


@receiver(post_delete, sender=AccountExport, dispatch_uid="privacy: export file goes with its row")
def _file_goes_with_the_row(sender: Any, instance: AccountExport, **kwargs: Any) -> None:
    """The account deleted (CASCADE) or the row pruned: its ZIP goes too, once the deletion is committed."""
    if instance.file_name:
        transaction.on_commit(lambda: _file_delete(instance.file_name))
