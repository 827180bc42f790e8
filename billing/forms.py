from __future__ import annotations

from django import forms

from billing.models import BillingDetails
from lib.text import PlainTextForm


class BillingDetailsForm(PlainTextForm, forms.ModelForm):
    """The name and address receipts are made out to."""

    class Meta:
        model = BillingDetails
        fields = ["name", "address", "tax_id"]
        labels = {"name": "Billing name", "address": "Billing address"}
        widgets = {"address": forms.Textarea(attrs={"rows": 3})}
