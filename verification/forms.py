from __future__ import annotations

from typing import Any

from django import forms

from verification.engine.modes import ValidationMode

MODE_CHOICES = [
    (ValidationMode.FAST, "Fast: syntax and DNS (1 credit)"),
    (ValidationMode.DEEP, "Deep: also ask the mail server whether the mailbox exists (1 credit; slower)"),
]


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


def mode_field() -> forms.ChoiceField:
    """The fast/deep choice of the verify and upload pages, offered only while deep mode is on."""
    # Not required: a form posted without it (an older page, a script) is a fast check, as before.
    return forms.ChoiceField(
        label="Mode", choices=MODE_CHOICES, initial=ValidationMode.FAST, required=False, widget=forms.RadioSelect
    )
