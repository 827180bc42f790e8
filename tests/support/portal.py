"""Helpers for portal tests: a persona's browser session."""

from __future__ import annotations

from django.test import Client

from tests.support.personas import Persona


def logged_in(persona: Persona) -> Client:
    client = Client()
    client.force_login(persona.account.owner)
    return client
