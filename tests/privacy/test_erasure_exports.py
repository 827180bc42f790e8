"""An erasure and the account's exports (docs/privacy.md, "Erasure"): a finished export's ZIP is a
copy of rows the erasure removes, so it is deleted and the export reads `expired`, saying why; an
export being built while the erasure runs is built again, and is done without what went."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from privacy import export_build
from privacy.models import AccountExport
from tests.conftest import Persona
from tests.jobs.conftest import RunTasks
from tests.privacy.conftest import ERASED, download, erase, erased_by_staff, exported, json_rows, zip_of
from tests.support.portal import logged_in

KEPT = "ann@other.com"


def reported(persona: Persona, *emails: str) -> None:
    events = [{"email": email, "outcome": "delivered"} for email in emails]
    assert persona.post_json("/v1/feedback", {"events": events}).status_code == 200


def reports_in(export: dict[str, Any]) -> list[str]:
    """The domains of the reported outcomes in the export's ZIP."""
    return [row["domain"] for row in json_rows(zip_of(download(export["download_url"])), "feedback_reports")]


def test_an_export_built_before_an_erasure_is_deleted_and_says_to_ask_for_a_new_one(
    owner: Persona, run_tasks: RunTasks
) -> None:
    reported(owner, ERASED, KEPT)
    before = exported(owner, run_tasks)
    assert sorted(reports_in(before)) == ["good.com", "other.com"]
    with run_tasks():
        assert erase(owner, {"emails": [ERASED]}).json()["erased"]["export_files"] == 1
    shown = owner.get(f"/v1/account/export/{before['id']}").json()
    assert (shown["status"], shown["download_url"]) == ("expired", None)
    refused = download(before["download_url"])
    assert (refused.status_code, refused.json()["error"]["code"]) == (410, "export_expired")
    assert "deleted when addresses were erased" in refused.json()["error"]["message"]
    assert owner.get(f"/v1/account/export/{before['id']}/download").status_code == 410
    assert "Deleted by an erasure: ask for a new one" in logged_in(owner).get(reverse("privacy")).content.decode()
    assert reports_in(exported(owner, run_tasks)) == ["other.com"]  # asked again: without it


def test_an_export_being_built_during_an_erasure_is_built_again_without_what_went(
    owner: Persona, run_tasks: RunTasks, monkeypatch: pytest.MonkeyPatch
) -> None:
    reported(owner, ERASED, KEPT)
    answers = _erasing_during_builds(owner, monkeypatch, builds=1)
    export = exported(owner, run_tasks)
    assert answers == [0]  # nothing finished to delete: the one in flight is marked instead
    assert export["status"] == "done" and export["rows_done"] == export["rows_total"]
    assert reports_in(export) == ["other.com"]
    assert AccountExport.objects.get().withdrawn_at is None


def test_an_export_meeting_an_erasure_in_each_build_fails_and_says_to_ask_again(
    owner: Persona, run_tasks: RunTasks, monkeypatch: pytest.MonkeyPatch
) -> None:
    reported(owner, ERASED, KEPT)
    _erasing_during_builds(owner, monkeypatch, builds=export_build.BUILDS)
    export = exported(owner, run_tasks)
    assert (export["status"], export["download_url"]) == ("failed", None)
    assert export["failure"] == export_build.ERASED_EACH_TIME
    assert not (AccountExport.objects.get().file_name)


def test_a_person_erasure_deletes_the_exports_of_the_accounts_holding_the_address_only(
    owner: Persona, outsider: Persona, run_tasks: RunTasks, admin_client_: Client
) -> None:
    reported(owner, ERASED)
    reported(outsider, KEPT)
    mine, theirs = exported(owner, run_tasks), exported(outsider, run_tasks)
    with run_tasks():
        erased_by_staff(admin_client_)
    assert owner.get(f"/v1/account/export/{mine['id']}").json()["status"] == "expired"
    assert outsider.get(f"/v1/account/export/{theirs['id']}").json()["status"] == "done"
    assert reports_in(theirs) == ["other.com"]


def _erasing_during_builds(owner: Persona, monkeypatch: pytest.MonkeyPatch, *, builds: int) -> list[int]:
    """Erase ERASED while each of the next `builds` builds writes its reports' CSV (their JSON, holding
    the report, is written by then); the erasures' `export_files` counts, as they come."""
    write = export_build._csv_write
    answers: list[int] = []

    def erasing(text: Any, section: Any, progress: Any) -> None:
        if section.name == "feedback_reports" and len(answers) < builds:
            if answers:  # reported again, to be erased again
                reported(owner, ERASED)
            answers.append(erase(owner, {"emails": [ERASED]}).json()["erased"]["export_files"])
        write(text, section, progress)

    monkeypatch.setattr(export_build, "_csv_write", erasing)
    return answers
