"""Text we store holds no NUL nor any other C0 control character (docs/api.md, "Errors").

PostgreSQL refuses NUL in a text column with an error (a 500 once it got that far); the other
controls are invisible in a page, a receipt or the audit log, where they can hide what a name
says. Multi-line fields (an address, a list one a line) keep their tab and line breaks.
"""

from __future__ import annotations

import re
from typing import Any

from django import forms

from lib.errors import DomainError

_CONTROLS = re.compile(r"[\x00-\x1f]")
_CONTROLS_BUT_LINES = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
MESSAGE = "Control characters (such as NUL) are not allowed."


def has_controls(text: str, *, multiline: bool = False) -> bool:
    return bool((_CONTROLS_BUT_LINES if multiline else _CONTROLS).search(text))


def plain_text(text: str, param: str, *, multiline: bool = False) -> str:
    """`text`, or a DomainError naming `param` when it holds a control character."""
    if has_controls(text, multiline=multiline):
        raise DomainError(f"{param}: {MESSAGE}", param)
    return text


class PlainTextForm(forms.BaseForm):
    """A form whose text fields refuse control characters (a Textarea keeps its line breaks), each on its field."""

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        for name, value in list(cleaned.items()):
            multiline = isinstance(self.fields[name].widget, forms.Textarea)
            if isinstance(value, str) and has_controls(value, multiline=multiline):
                self.add_error(name, MESSAGE)
        return cleaned
