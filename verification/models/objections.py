"""Objections (docs/privacy.md, "Objection"): a person asked that their address not be verified. Staff
record it in the admin; from then no account's verification of it is judged, charged or stored."""

from __future__ import annotations

from collections.abc import Collection

from django.conf import settings
from django.db import models
from django.utils import timezone

from lib import sql
from lib.address_keys import KEY_LENGTH, address_keys


class ObjectionQuerySet(models.QuerySet["Objection"]):
    def among(self, emails: Collection[str]) -> set[str]:
        """Those of `emails` whose person objected. Hand-written (lib/sql.py): every bulk chunk asks for
        each of its rows, and the ORM's IN list of a 20,000-row deep batch's keys took longer to build
        than the statement took to run. Objections are few: while there are no more of them than
        addresses asked about, all are read (one short statement) rather than the keys sent, and
        while there are none, no key is computed (a worker's batch computes them as it goes)."""
        if not emails:
            return set()
        table = sql.table(Objection)
        every = sql.fetch_all(f"SELECT address_key FROM {table} LIMIT %s", [len(emails) + 1])
        if not every:
            return set()
        keys = address_keys(emails)
        if len(every) <= len(emails):  # the whole table
            return {keys[key] for (key,) in every if key in keys}
        select = f"SELECT address_key FROM {table} WHERE 1 = %s"
        return {keys[key] for (key,) in sql.fetch_all_in(select, [1], "address_key", list(keys))}


class Objection(models.Model):
    """Kept as the address's HMAC (lib/address_keys.py), with who recorded it and when; for good:
    an objection has no end but its removal by staff."""

    address_key = models.CharField(max_length=KEY_LENGTH, unique=True)
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+", editable=False
    )
    # Kept by email too, should the staff member's user go.
    recorded_by_email = models.CharField(max_length=254, blank=True, editable=False)
    recorded_at = models.DateTimeField(default=timezone.now, editable=False)

    objects = ObjectionQuerySet.as_manager()

    def __str__(self) -> str:
        return f"objection {self.address_key[:12]}… by {self.recorded_by_email or 'staff'}"
