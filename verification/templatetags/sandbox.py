"""`{% load sandbox %}{% sandbox_addresses as addresses %}`: the test keys' fixed answers, for the keys page."""

from __future__ import annotations

from django import template

from verification.engine.sandbox import sandbox_answers

register = template.Library()


@register.simple_tag
def sandbox_addresses() -> list[tuple[str, str]]:
    """(address, what a test key answers for it), in the sandbox's own order."""
    return sandbox_answers()
