"""A machine's deep-chunk slots: how many of its workers may run deep chunks at once (fair share
across modes, docs/bulk.md); lock files of the SMTP host slots' kind (verification/engine/smtp_slots.py)."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings

from verification.engine.smtp_slots import lock_slot

logger = logging.getLogger(__name__)


# The lock files' name (deep_slot).
DEEP_SLOTS = "bulk-deep-chunks"


class DeepSlot:
    """One of this machine's deep-chunk slots, or none (`held` False)."""

    def __init__(self, fd: int | None) -> None:
        self.fd = fd

    @property
    def held(self) -> bool:
        return self.fd is not None

    def give_back(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing the descriptor releases the lock
            self.fd = None


@contextmanager
def deep_slot() -> Iterator[DeepSlot]:
    """Fair share across modes: a live deep chunk holds its worker for as long as mail servers take
    (up to half a lease), so at most BULK_DEEP_WORKERS of a machine's workers run deep chunks at
    once (by default all but one), each holding a per-machine lock file for it (the SMTP host
    slots' kind: released by the kernel however the worker dies). A worker without one takes only
    fast chunks, so another customer's fast job always finds a worker."""
    try:
        slot = DeepSlot(lock_slot(settings.VERIFIER_SMTP_LOCK_DIR, DEEP_SLOTS, settings.BULK_DEEP_WORKERS))
    except OSError:  # an unwritable lock directory stops deep work (its SMTP slots need it too), not fast work
        logger.exception("no deep-chunk slot: VERIFIER_SMTP_LOCK_DIR %s is unusable", settings.VERIFIER_SMTP_LOCK_DIR)
        slot = DeepSlot(None)
    try:
        yield slot
    finally:
        slot.give_back()
