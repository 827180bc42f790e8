from __future__ import annotations

from typing import Any

from django import forms

from verification.engine.modes import ValidationMode
from verification.mode_choice import mode_field


class VerifyForm(forms.Form):
    # The API takes any string up to 1,000 characters and gives it a verdict; so does the portal.
    email = forms.CharField(
        label="Email address",
        max_length=1000,
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false", "inputmode": "email"}),
    )

    def __init__(self, *args: Any, deep: bool = False, **kwargs: Any) -> None:
        """`deep`: whether the operator turned deep mode on; only then is there a choice to make."""
        super().__init__(*args, **kwargs)
        if deep:
            self.fields["validation_mode"] = mode_field()

    @property
    def mode(self) -> ValidationMode:
        return ValidationMode(self.cleaned_data.get("validation_mode") or ValidationMode.FAST)
