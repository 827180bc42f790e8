from __future__ import annotations

from typing import Any

from django import forms
from django.core.validators import MaxValueValidator

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


class RetentionForm(forms.Form):
    job_retention_days = forms.IntegerField(
        label="Keep a job's files for (days)",
        min_value=1,
        required=False,
        help_text="Once the job finished; an upload's own retention_days wins. Blank: the service's default.",
    )

    def __init__(self, *args: Any, most: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["job_retention_days"]
        field.widget.attrs["max"] = most
        field.validators.append(MaxValueValidator(most))
        field.help_text += f" At most {most} on this plan."


class ProbeRegionForm(forms.Form):
    probe_region = forms.ChoiceField(
        label="Deep verification probes leave from",
        help_text="Only mail servers' answers asked from this region's addresses; with none of them working, "
        "deep rows answer unknown / smtp_blocked at once, free.",
    )

    def __init__(self, *args: Any, regions: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["probe_region"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [("any", "Any region"), *((region, region) for region in regions)]
