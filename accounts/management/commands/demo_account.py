from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand

DEMO_EMAIL = "demo@example.com"


class Command(BaseCommand):
    help = "Create the demo account once (for `make run`) and print how to use it."

    def handle(self, *args: Any, **options: Any) -> None:
        saved = Path(settings.BASE_DIR) / "var" / "demo-account.json"
        if not get_user_model().objects.filter(username=DEMO_EMAIL).exists():
            out = _capture("create_account", "--email", DEMO_EMAIL, "--plan", "starter", "--credits", "1000", "--json")
            saved.parent.mkdir(parents=True, exist_ok=True)
            saved.write_text(out)
        if not saved.exists():
            self.stdout.write(f"The demo account {DEMO_EMAIL} exists; its key was shown when it was created.")
            return
        demo = json.loads(saved.read_text())
        site = settings.SITE_URL
        self.stdout.write(
            "\nDemo account (saved in var/demo-account.json):\n"
            f"  portal:   {site}/   login {demo['login_email']} / {demo['password']}\n"
            f"  API key:  {demo['api_key']}\n"
            f"  test key: {demo.get('test_api_key') or '(none: made before test keys existed)'}  (sandbox, free)\n"
            f"  try it:   curl -s {site}/v1/verify -H 'Authorization: Bearer {demo['api_key']}' "
            "-H 'Content-Type: application/json' -d '{\"email\": \"someone@gmail.com\"}'\n"
            f"  API docs: {site}/v1/docs\n"
        )


def _capture(*args: str) -> str:
    from io import StringIO

    buffer = StringIO()
    call_command(*args, stdout=buffer)
    return buffer.getvalue()
