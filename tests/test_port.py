"""`make run PORT=18280`: every link we print or hand out follows the port, unless SITE_URL is set."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

from django.core.management import call_command

ROOT = Path(__file__).resolve().parents[1]


def site_url(**env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in {"PORT", "SITE_URL", "DJANGO_SETTINGS_MODULE"}}
    code = "import django; django.setup(); from django.conf import settings; print(settings.SITE_URL)"
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**clean, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


def test_site_url_follows_port() -> None:
    assert site_url(PORT="18280") == "http://localhost:18280"


def test_site_url_defaults_to_port_8000() -> None:
    assert site_url() == "http://localhost:8000"


def test_a_set_site_url_wins_over_port() -> None:
    assert site_url(PORT="18280", SITE_URL="https://verify.example.com/") == "https://verify.example.com"


def test_make_run_hands_port_to_every_process_it_starts() -> None:
    recipe = subprocess.run(
        ["make", "-n", "run", "PORT=18280"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    ).stdout
    started = re.findall(r"manage\.py (demo_account|qcluster|runserver\S*)", recipe)
    assert started == ["demo_account", "qcluster", "runserver"]
    assert "PORT=18280 .venv/bin/python manage.py demo_account" in recipe
    assert "export PORT=18280" in recipe.split("manage.py demo_account", 1)[1].split("manage.py qcluster")[0]
    assert "runserver 0.0.0.0:18280" in recipe


def test_demo_account_prints_links_on_the_site_url(db: None, settings: Any, tmp_path: Path) -> None:
    settings.BASE_DIR, settings.SITE_URL = tmp_path, "http://localhost:18280"
    out = StringIO()
    call_command("demo_account", stdout=out)
    links = re.findall(r"https?://[^\s/']+", out.getvalue())
    assert len(links) == 3
    assert set(links) == {"http://localhost:18280"}
