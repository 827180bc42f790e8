"""The fast/deep choice as the portal's pages offer it, one field for the verify page
(verification/forms.py) and the upload page (jobs/forms.py)."""

from __future__ import annotations

from django import forms

from verification.engine.modes import ValidationMode

MODE_CHOICES = [
    (ValidationMode.FAST, "Fast: syntax and DNS (1 credit)"),
    (ValidationMode.DEEP, "Deep: also ask the mail server whether the mailbox exists (1 credit; slower)"),
]


def mode_field() -> forms.ChoiceField:
    """The choice, offered only while deep mode is on."""
    # Not required: a form posted without it (an older page, a script) is a fast check, as before.
    return forms.ChoiceField(
        label="Mode", choices=MODE_CHOICES, initial=ValidationMode.FAST, required=False, widget=forms.RadioSelect
    )
