"""Probe region (docs/privacy.md): egresses carry `|region=<name>`; an account's `probe_region` keeps
its deep sessions to that region's egresses, and with none healthy its deep rows answer unknown /
smtp_blocked at once, free. Against the MX farm on loopback."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests.conftest import Persona
from tests.jobs.conftest import RunTasks, ledger_sum
from tests.support.bulk_jobs import bulk_net, csv_of, download, job_body
from tests.support.mx_farm import MxFarm
from tests.support.portal import logged_in
from verification.engine.egress import EgressError, parse_egresses

EU, US = "127.0.0.50", "127.0.0.51"
EGRESSES = f"bind:{EU}|helo=eu.deep-sender.net|region=eu,bind:{US}|helo=us.deep-sender.net|region=us-east"
ALICE = "alice@mailbox.deepfarm.net"


def test_an_egress_reads_its_region_and_a_bad_one_is_refused() -> None:
    eu, us = parse_egresses(EGRESSES)
    assert (eu.region, us.region) == ("eu", "us-east")
    assert parse_egresses(f"bind:{EU}")[0].region == ""
    for bad in ["EU", "any", "", "eu west", "eu|region=us"]:
        with pytest.raises(EgressError, match="region"):
            parse_egresses(f"bind:{EU}|region={bad}")


def pinned(persona: Persona, region: str) -> Persona:
    persona.account.probe_region = region
    persona.account.save(update_fields=["probe_region"])
    return persona


def deep(persona: Persona, email: str) -> Any:
    return persona.post_json("/v1/verify", {"email": email, "validation_mode": "deep"})


@pytest.fixture
def regions(deep_farm: MxFarm, settings: Any) -> MxFarm:
    settings.VERIFIER_SMTP_EGRESS = EGRESSES
    return deep_farm


def test_an_account_pinned_to_a_region_asks_only_through_its_egresses(owner: Persona, regions: MxFarm) -> None:
    balance = ledger_sum(pinned(owner, "eu"))
    body = deep(owner, ALICE).json()
    assert (body["status"], body["sub_status"]) == ("valid", None)
    assert {source for source, _ in regions.stats.by_source} == {EU} and ledger_sum(owner) == balance - 1


def test_with_no_egress_of_its_region_deep_rows_are_smtp_blocked_at_once_and_free(
    owner: Persona, regions: MxFarm
) -> None:
    balance = ledger_sum(pinned(owner, "ap-south"))
    body = deep(owner, ALICE).json()
    assert (body["status"], body["sub_status"]) == ("unknown", "smtp_blocked")
    assert sum(regions.stats.sessions.values()) == 0 and ledger_sum(owner) == balance
    assert deep(owner, "not-an-address").json()["sub_status"] == "invalid_syntax"  # decided without a session
    assert ledger_sum(owner) == balance - 1


def test_a_deep_job_without_an_egress_of_its_region_is_not_charged_for_those_rows(
    owner: Persona, regions: MxFarm, run_tasks: RunTasks
) -> None:
    pinned(owner, "ap-south")
    with run_tasks():
        data = {"validation_mode": "deep"}
        job_id = str(upload_deep(owner, csv_of([ALICE, "not-an-address"]), data).json()["id"])
    rows = download(owner, job_body(owner, job_id)["result_download_url"])
    assert [(row[0], row[2]) for row in rows[1:]] == [(ALICE, "smtp_blocked"), ("not-an-address", "invalid_syntax")]
    assert bulk_net(owner, job_id) == -1 and sum(regions.stats.sessions.values()) == 0


def upload_deep(persona: Persona, content: bytes, parts: dict[str, str]) -> Any:
    data = {"file": SimpleUploadedFile("list.csv", content, "text/csv"), **parts}
    return persona.client.post("/v1/verify/bulk", data=data, headers=persona.auth({}))


def test_owners_choose_the_region_on_the_privacy_page(owner: Persona, settings: Any) -> None:
    settings.VERIFIER_SMTP_EGRESS = EGRESSES
    client = logged_in(owner)
    page = client.get(reverse("privacy")).content.decode()
    assert 'value="us-east"' in page and 'value="eu"' in page
    assert client.post(reverse("privacy-region"), {"probe_region": "mars"}).status_code == 400
    assert client.post(reverse("privacy-region"), {"probe_region": "eu"}).status_code == 302
    owner.account.refresh_from_db()
    assert owner.account.probe_region == "eu"
