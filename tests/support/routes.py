"""Every route of the URL configuration, and a real object of an account for each of its parameters."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone

from accounts.models import Invitation, Membership, Role
from accounts.widget import widget_script
from billing.models import Payment
from jobs.models import Job
from privacy.models import AccountExport
from tests.factories import UserFactory
from tests.support.personas import Persona
from verification.models import RetriedVerification


def routes(patterns: list[Any] | None = None, namespace: str = "") -> Iterator[tuple[str, Any, list[str]]]:
    """(URL name, view, its parameters) of every route but the staff admin's (it has its own door)."""
    for entry in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(entry, URLResolver):
            if entry.namespace != "admin":
                yield from routes(entry.url_patterns, entry.namespace or namespace)
        elif isinstance(entry, URLPattern):
            yield str(entry.name), entry.callback, list(entry.pattern.converters)


ROUTES = sorted(routes(), key=lambda route: route[0])
PORTAL = [(name, view.permission, params) for name, view, params in ROUTES if hasattr(view, "permission")]


def sample_arguments(persona: Persona, params: list[str]) -> dict[str, Any]:
    """A real object of the account for each route parameter."""
    values: dict[str, Any] = {}
    if "job_id" in params:
        values["job_id"] = Job.objects.create(account=persona.account, total=1, input_name="none.csv").pk
    if "key_id" in params:
        values["key_id"] = persona.account.api_keys.get().pk
    if "member_id" in params:
        values["member_id"] = Membership.objects.create(
            account=persona.account, user=UserFactory(), role=Role.VIEWER
        ).pk
    if "code" in params:
        values["code"] = "pack_1k"
    if "version" in params:
        values["version"] = widget_script().version
    if "provider" in params:
        values["provider"] = "sendgrid"  # a feedback webhook's sending service
    if "invitation_id" in params:
        values["invitation_id"] = Invitation.objects.create(
            account=persona.account, email="invited@company.example.com", role=Role.VIEWER
        ).pk
    if "payment_id" in params:
        # One sample payment however many routes take one (its receipt page and its PDF).
        values["payment_id"] = Payment.objects.get_or_create(
            stripe_id="pi_sample",
            defaults={
                "account": persona.account,
                "kind": "pack",
                "product": "pack_1k",
                "cents": 1000,
                "currency": "usd",
                "status": "succeeded",
                "credits": 1000,
            },
        )[0].pk
    if "verification_id" in params:
        values["verification_id"] = RetriedVerification.objects.create(
            account=persona.account, result={"email": "a@b.example"}, charged=True, expires_at=timezone.now()
        ).pk
    if "export_id" in params:
        values["export_id"] = AccountExport.objects.create(account=persona.account).pk
    assert set(values) == set(params), f"no sample for {set(params) - set(values)}"
    return values
