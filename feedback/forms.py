from __future__ import annotations

from django import forms

from lib.text import PlainTextForm


class FeedbackUploadForm(forms.Form):
    file = forms.FileField(
        label="CSV file",
        widget=forms.ClearableFileInput(attrs={"accept": ".csv,.txt,text/csv,text/plain"}),
        help_text="One row per event: email,outcome[,occurred_at]. Outcomes: delivered, hard_bounce, soft_bounce, "
        "complaint. Times in RFC 3339 (2026-11-20T09:30:00Z); now when left out.",
    )


class MailgunKeyForm(PlainTextForm, forms.Form):
    mailgun_signing_key = forms.CharField(
        label="Mailgun HTTP webhook signing key",
        required=False,
        max_length=200,
        help_text="Set it and every Mailgun event must carry a matching signature; leave blank not to check.",
    )
