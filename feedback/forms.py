from __future__ import annotations

from typing import Any

from django import forms

from feedback.signatures import BadVerificationKey, sendgrid_key
from lib.text import PlainTextForm


class FeedbackUploadForm(forms.Form):
    file = forms.FileField(
        label="CSV file",
        widget=forms.ClearableFileInput(attrs={"accept": ".csv,.txt,text/csv,text/plain"}),
        help_text="One row per event: email,outcome[,occurred_at]. Outcomes: delivered, hard_bounce, soft_bounce, "
        "complaint. Times in RFC 3339 (2026-11-20T09:30:00Z); now when left out.",
    )


class MailgunKeyForm(PlainTextForm, forms.Form):
    """How each sending service proves its events (docs/feedback.md, "Webhooks"): only proven events
    count for the bounce guarantee (docs/guarantee.md)."""

    mailgun_signing_key = forms.CharField(
        label="Mailgun HTTP webhook signing key",
        required=False,
        max_length=200,
        help_text="Set it and every Mailgun event must carry a matching signature; leave blank not to check.",
    )
    sendgrid_verification_key = forms.CharField(
        label="SendGrid Signed Event Webhook verification key",
        required=False,
        max_length=1000,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Turn on the Signed Event Webhook in SendGrid and paste its verification key; every SendGrid "
        "event must then carry a matching signature. Leave blank not to check.",
    )
    postmark_username = forms.CharField(
        label="Postmark basic-auth username", required=False, max_length=100, help_text="Blank: not checked."
    )
    postmark_password = forms.CharField(
        label="Postmark basic-auth password",
        required=False,
        max_length=200,
        help_text="Choose both; the Postmark URL above then carries them, and every Postmark request must too.",
    )

    def clean_sendgrid_verification_key(self) -> str:
        text = str(self.cleaned_data.get("sendgrid_verification_key", "")).strip()
        if text:
            try:
                sendgrid_key(text)
            except BadVerificationKey as error:
                raise forms.ValidationError(error.message) from None
        return text

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        username, password = (str(cleaned.get(name, "")).strip() for name in ("postmark_username", "postmark_password"))
        if bool(username) != bool(password):
            raise forms.ValidationError("Set both the Postmark username and password, or neither.")
        if ":" in username:
            raise forms.ValidationError("The Postmark username cannot hold a colon.")
        return cleaned
