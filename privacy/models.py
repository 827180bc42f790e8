"""What staff did for a data subject (docs/privacy.md, "Erasure for a person")."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class PersonErasure(models.Model):
    """A person's address erased by staff from every account and the shared stores: who, when, why
    and how much went. Never the address: its HMAC (lib/address_keys.py) says which, to whoever
    holds the address."""

    address_key = models.CharField(max_length=64, editable=False)
    reason = models.CharField(max_length=500, help_text="Why, e.g. the person's request and its reference.")
    erased_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+", editable=False
    )
    # Kept by email too, should the staff member's user go.
    erased_by_email = models.CharField(max_length=254, blank=True, editable=False)
    erased = models.JSONField(default=dict, editable=False, help_text="How many went, by store.")
    erased_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-erased_at", "-pk"]

    def __str__(self) -> str:
        return f"erasure of {self.address_key[:12]}… by {self.erased_by_email or 'staff'}"
