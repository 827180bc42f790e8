from __future__ import annotations

import json
import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.core.validators import validate_email
from django.db import transaction

from accounts.models import Plan
from accounts.services import account_open
from billing.services import OPENING_NOTE, credits_grant


class Command(BaseCommand):
    help = "Open an account with an owner login, a plan, credits, a live API key and a test (sandbox) key."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--email", required=True, help="Owner's login email.")
        parser.add_argument("--plan", default="free", help="Plan code: free, starter, pro or enterprise.")
        parser.add_argument("--credits", type=int, default=100, help="Opening credit balance.")
        parser.add_argument("--password", help="Owner's password (generated when omitted).")
        parser.add_argument("--json", action="store_true", help="Print one JSON object and nothing else.")

    def handle(self, *args: Any, **options: Any) -> None:
        email = options["email"].strip().lower()
        try:
            validate_email(email)
        except ValidationError:
            raise CommandError(f"not an email address: {email!r}") from None
        if options["credits"] < 0:
            raise CommandError("--credits cannot be negative")
        if not Plan.objects.filter(code=options["plan"]).exists():
            codes = ", ".join(Plan.objects.values_list("code", flat=True))
            raise CommandError(f"unknown plan {options['plan']!r}; choose one of: {codes}")
        if get_user_model().objects.filter(username=email).exists():
            raise CommandError(f"an account for {email} already exists")
        password = options["password"] or secrets.token_urlsafe(12)
        with transaction.atomic():
            opened = account_open(email=email, password=password, plan_code=options["plan"], issue_key=True)
            if options["credits"]:
                credits_grant(account=opened.account, amount=options["credits"], note=OPENING_NOTE)
        result = {
            "account_id": str(opened.account.public_id),
            "api_key": opened.api_key,
            "test_api_key": opened.test_api_key,
            "signing_secret": opened.account.signing_secret,
            "login_email": email,
            "password": password,
        }
        if options["json"]:
            self.stdout.write(json.dumps(result))
        else:
            for name, value in result.items():
                self.stdout.write(f"{name:>15}: {value}")
