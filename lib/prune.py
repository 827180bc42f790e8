"""Deleting what has expired, in batches, so a prune never holds a long lock or a huge transaction."""

from __future__ import annotations

from django.db import models

BATCH = 5000


def delete_in_batches(queryset: models.QuerySet, *, batch: int = BATCH) -> int:
    """Delete every row of `queryset` (which must be cheap to select: indexed), `batch` at a time."""
    deleted = 0
    while ids := list(queryset.values_list("pk", flat=True)[:batch]):
        deleted += queryset.model._default_manager.filter(pk__in=ids).delete()[0]
    return deleted
