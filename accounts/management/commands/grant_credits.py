from __future__ import annotations

import uuid
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.models import Account
from billing.services import credits_grant


class Command(BaseCommand):
    help = "Add credits to an account (writes a grant to its ledger)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("account_id", help="The account_id printed by create_account.")
        parser.add_argument("credits", type=int)
        parser.add_argument("--note", default="Granted from the command line")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["credits"] <= 0:
            raise CommandError("credits must be a positive whole number")
        try:
            account = Account.objects.get(public_id=uuid.UUID(options["account_id"]))
        except (ValueError, Account.DoesNotExist):
            raise CommandError(f"no account with id {options['account_id']!r}") from None
        balance = credits_grant(account=account, amount=options["credits"], note=options["note"])
        self.stdout.write(f"granted {options['credits']} credits; balance is now {balance}")
