"""`createsuperuser` asks for an email address (and a password), `createsuperuser --noinput --email
staff@example.com` takes one: staff sign in by email as customers do, so the email is the login (the
username) unless --username is given too."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.management.commands import createsuperuser


class Command(createsuperuser.Command):
    def handle(self, *args: Any, **options: Any) -> None:
        email, login = options.get("email"), self.username_field.name
        if not email and not options.get(login) and options.get("interactive") and self.stdin.isatty():
            email = options["email"] = self._email_asked()  # asked for the address only, not a username
        if email and not options.get(login):
            options[login] = email.strip().lower()
        super().handle(*args, **options)

    def _email_asked(self) -> str:
        while not (email := input("Email address (your login): ").strip()) or "@" not in email:
            self.stderr.write("Error: an email address, please.")
        return email
