"""Deleting what has expired, in batches, so a prune never holds a long lock or a huge transaction.

Every model whose rows carry an indexed `expires_at` is pruned by `prune_expired` (the hourly
task, scheduled in `verification/queue.py`): a table that grows with use gets its lifetime by
declaring that field, and no app has to know another's models to have them pruned.
"""

from __future__ import annotations

import logging
import time

from django.apps import apps
from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.utils import timezone

BATCH = 5000
logger = logging.getLogger(__name__)


def delete_in_batches(queryset: models.QuerySet, *, batch: int = BATCH) -> int:
    """Delete every row of `queryset` (which must be cheap to select: indexed), `batch` at a time."""
    deleted = 0
    while ids := list(queryset.values_list("pk", flat=True)[:batch]):
        deleted += queryset.model._default_manager.filter(pk__in=ids).delete()[0]
    return deleted


def expiring_models() -> list[type[models.Model]]:
    """The installed models with an indexed `expires_at` column."""
    return [model for model in apps.get_models() if _expires_indexed(model)]


def _expires_indexed(model: type[models.Model]) -> bool:
    try:
        field = model._meta.get_field("expires_at")
    except FieldDoesNotExist:
        return False
    return isinstance(field, models.DateTimeField) and bool(getattr(field, "db_index", False))


def prune_expired() -> dict[str, int]:
    """Delete the expired rows of every expiring model; returns how many, by model name."""
    started, now = time.perf_counter(), timezone.now()
    pruned = {
        model.__name__: delete_in_batches(model._default_manager.filter(expires_at__lte=now))
        for model in expiring_models()
    }
    logger.info("pruned expired rows %s in %.2f s", pruned, time.perf_counter() - started)
    return pruned
