"""The import rules are made from the one list of apps: a package of ours cannot be left out of them,
a module without a place is refused, and INSTALLED_APPS is made from the same list."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from config import import_rules
from config.apps import DJANGO_APPS, PACKAGES

ROOT = Path(__file__).resolve().parents[2]
NOT_APP_CODE = {"config", "tests", "bench", "clients", "static", "templates", "docs", "var"}


def test_every_package_of_ours_is_on_a_floor() -> None:
    on_disk = {
        path.parent.name
        for path in ROOT.glob("*/__init__.py")
        if path.parent.name not in NOT_APP_CODE and not path.parent.name.startswith(".")
    }
    assert on_disk == set(PACKAGES)


def test_installed_apps_are_the_list_s_django_apps() -> None:
    ours = [app for app in settings.INSTALLED_APPS if app in PACKAGES]
    assert sorted(ours) == sorted(DJANGO_APPS)
    assert set(DJANGO_APPS) == {path.parent.name for path in ROOT.glob("*/apps.py")} - NOT_APP_CODE


def test_the_rules_name_every_app_and_every_door() -> None:
    rules = import_rules.rules()
    for package in PACKAGES:
        assert f"    {package}\n" in rules
    assert "    jobs.apis\n" in rules  # a door, forbidden to domain code
    assert "containers =\n" in rules and "    privacy\n" in rules


def test_a_module_without_a_tier_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    real = import_rules.modules

    def with_a_stray(package: str) -> list[str]:
        found = list(real(package))
        return [*found, "jobs.stray"] if package == "jobs" else found

    monkeypatch.setattr(import_rules, "modules", with_a_stray)
    with pytest.raises(SystemExit, match="give jobs.stray a door name or a tier"):
        import_rules.rules()
