"""What the accounts tests share: a password, and two-factor turned on as a person turns it on."""

from __future__ import annotations

import re

from django.test import Client
from django.urls import reverse

from tests.support.totp import totp_code

PASSWORD = "correct horse battery staple"
SECRET = re.compile(r"data-totp-secret>([A-Z2-7]+)<")


def enrol(client: Client) -> tuple[str, list[str]]:
    """Turn two-factor on as a person would; returns the secret and the recovery codes shown."""
    page = client.get(reverse("security")).content.decode()
    match = SECRET.search(page)
    assert match is not None and "<svg" in page
    done = client.post(reverse("security"), {"code": totp_code(match.group(1))}).content.decode()
    codes = re.findall(r"<li>([a-z0-9]+)</li>", done.split("data-recovery-codes")[1].split("</ul>")[0])
    return match.group(1), codes
