"""`createsuperuser --noinput --email staff@example.com`: staff sign in by email as customers do, so
the email is the login (the username) unless --username is given too."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.management.commands import createsuperuser


class Command(createsuperuser.Command):
    def handle(self, *args: Any, **options: Any) -> None:
        email, login = options.get("email"), self.username_field.name
        if email and not options.get(login):
            options[login] = email.strip().lower()
        super().handle(*args, **options)
