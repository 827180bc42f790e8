from __future__ import annotations

from typing import Any

from django.core.validators import ProhibitNullCharactersValidator
from rest_framework import serializers


class StrictCharField(serializers.CharField):
    """A CharField that refuses numbers and booleans instead of quietly stringifying them.

    With `allow_nul=True` a string holding NUL characters is accepted too (DRF refuses them).
    """

    def __init__(self, *, allow_nul: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if allow_nul:
            self.validators = [v for v in self.validators if not isinstance(v, ProhibitNullCharactersValidator)]

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)
