from __future__ import annotations

from typing import Any

from django import forms

from verification.mode_choice import mode_field

# The job page's download buttons: (label, status filter) and, for each, with or without the customer's columns.
DOWNLOADS = [
    ("All", ""),
    ("Safe to send", "valid"),
    ("Valid + risky", "valid,risky"),
    ("Invalid only", "invalid"),
    ("Risky only", "risky"),
    ("Unknown only", "unknown"),
]


class UploadForm(forms.Form):
    """Only the fields: every check (size, rows, plan, callback URL) is `jobs.services`', as for the API."""

    file = forms.FileField(
        label="CSV file",
        required=False,
        allow_empty_file=True,
        widget=forms.ClearableFileInput(attrs={"accept": ".csv,.txt,text/csv,text/plain"}),
    )
    callback_url = forms.CharField(
        label="Callback URL (optional)",
        required=False,
        widget=forms.URLInput(attrs={"placeholder": "https://hooks.example.com/email-verifier"}),
        help_text="We POST a signed JSON event here when the job completes or fails.",
    )
    email_column = forms.CharField(required=False, max_length=300, widget=forms.HiddenInput)
    notify_me = forms.BooleanField(label="Email me when the list is done", required=False)
    confirm_partial = forms.BooleanField(required=False)
    confirm_no_addresses = forms.BooleanField(required=False)

    def __init__(self, *args: Any, deep: bool = False, **kwargs: Any) -> None:
        """`deep`: whether the operator turned deep mode on; only then is there a mode to choose."""
        super().__init__(*args, **kwargs)
        if deep:
            self.fields["validation_mode"] = mode_field()
