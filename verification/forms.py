from __future__ import annotations

from django import forms


class VerifyForm(forms.Form):
    # The API takes any string up to 1,000 characters and gives it a verdict; so does the portal.
    email = forms.CharField(
        label="Email address",
        max_length=1000,
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false", "inputmode": "email"}),
    )
