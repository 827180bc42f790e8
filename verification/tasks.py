"""django-q2 entry points of the verification app."""

from __future__ import annotations

import logging
import time

from django.utils import timezone

from api.models import IdempotencyRecord
from lib.prune import delete_in_batches
from verification.models import CachedVerdict, DomainRecord

logger = logging.getLogger(__name__)


def prune_expired() -> dict[str, int]:
    """Hourly: delete expired verdict-cache, domain-cache and idempotency rows (each indexed by expiry)."""
    started, now = time.perf_counter(), timezone.now()
    pruned = {
        model.__name__: delete_in_batches(model._default_manager.filter(expires_at__lte=now))
        for model in (CachedVerdict, DomainRecord, IdempotencyRecord)
    }
    logger.info("pruned expired rows %s in %.2f s", pruned, time.perf_counter() - started)
    return pruned
