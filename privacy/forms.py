from __future__ import annotations

from django import forms

from lib.errors import DomainError
from privacy.erasure import MAX_EMAILS, emails_of


class ErasureForm(forms.Form):
    emails = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 6}),
        max_length=1_100_000,
        help_text=f"One address a line, or separated by commas; up to {MAX_EMAILS:,}.",
    )
    confirm = forms.BooleanField(
        label="I understand these addresses are erased for good from this account's verdicts, reports and job results."
    )

    def clean_emails(self) -> list[str]:
        cells = [cell for line in self.cleaned_data["emails"].splitlines() for cell in line.split(",")]
        try:
            return emails_of({"emails": [cell for cell in cells if cell.strip()]})
        except DomainError as error:
            raise forms.ValidationError(error.message.removeprefix("emails: ")) from None
