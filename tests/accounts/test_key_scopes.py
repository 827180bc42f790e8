"""Scoped keys on the API: scope, expiry and IP allow-list; outside them 403 key_not_permitted,
nothing changed and nothing charged. (Every scope × endpoint: tests/accounts/test_permissions.py.)"""

from __future__ import annotations

from datetime import timedelta

import time_machine
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from accounts.models import ApiKey
from tests.conftest import Persona


def use(persona: Persona, **limits: object) -> Persona:
    persona.api_key = ApiKey.issue(account=persona.account, **limits)[1]
    return persona


def refused(response: object) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]  # type: ignore[attr-defined]


def test_a_verify_key_verifies_but_cannot_list_jobs(owner: Persona) -> None:
    use(owner, scope=ApiKey.Scope.VERIFY)
    assert owner.verify("jane@good.com").status_code == 200
    assert refused(owner.get("/v1/jobs")) == (403, "key_not_permitted")


def test_a_verify_key_cannot_submit_a_bulk_job_and_nothing_is_made(owner: Persona) -> None:
    use(owner, scope=ApiKey.Scope.VERIFY)
    upload = SimpleUploadedFile("list.csv", b"email\njane@good.com\n", content_type="text/csv")
    response = owner.client.post("/v1/verify/bulk", {"file": upload}, headers=owner.auth({}))
    assert refused(response) == (403, "key_not_permitted")
    assert not owner.account.jobs.exists()


def test_a_read_key_cannot_verify_and_spends_nothing(owner: Persona) -> None:
    use(owner, scope=ApiKey.Scope.READ)
    balance = owner.account.credit_balance
    response = owner.verify("jane@good.com")
    assert refused(response) == (403, "key_not_permitted")
    assert "read scope" in response.json()["error"]["message"]
    owner.account.refresh_from_db()
    assert owner.account.credit_balance == balance
    assert owner.get("/v1/jobs").status_code == 200


def test_an_expired_key_is_refused_from_its_expiry_on(owner: Persona) -> None:
    expires = timezone.now() + timedelta(days=1)
    use(owner, expires_at=expires)
    assert owner.verify("jane@good.com").status_code == 200
    with time_machine.travel(expires):
        response = owner.verify("jane@good.com")
    assert refused(response) == (403, "key_not_permitted")
    assert response.json()["error"]["message"] == "This API key has expired."


def test_a_key_works_only_from_its_allowed_networks(owner: Persona) -> None:
    use(owner, allowed_ips="10.1.0.0/16\n2001:db8::/32")
    assert refused(owner.verify("jane@good.com")) == (403, "key_not_permitted")  # the test client is 127.0.0.1
    inside = owner.client.post(
        "/v1/verify", {"email": "a@good.com"}, "application/json", REMOTE_ADDR="10.1.2.3", headers=owner.auth({})
    )
    v6 = owner.client.get("/v1/jobs", REMOTE_ADDR="2001:db8::1", headers=owner.auth({}))
    assert (inside.status_code, v6.status_code) == (200, 200)


def test_last_used_is_recorded_for_the_key_used(owner: Persona) -> None:
    use(owner, scope=ApiKey.Scope.VERIFY)
    owner.verify("jane@good.com")
    assert owner.account.api_keys.get(scope="verify").last_used_at is not None


def test_a_deactivated_accounts_keys_stop_at_once(owner: Persona) -> None:
    user = owner.account.owner
    user.is_active = False
    user.save(update_fields=["is_active"])
    assert refused(owner.verify("jane@good.com")) == (401, "invalid_api_key")
