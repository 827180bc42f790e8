"""Schema moves keep the data they move: each test migrates a database of its own, in a subprocess,
from before the move to after it (the suite's own database stays as it is)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

MANAGE = Path(__file__).resolve().parents[1] / "manage.py"
pytestmark = pytest.mark.e2e  # several `manage.py` processes: ~10 s, so in `make test-all` and CI

BEFORE_DATA = """
from django.contrib.auth import get_user_model
from django.db import connection
with connection.cursor() as c:
    c.execute("SELECT id FROM billing_plan WHERE code = 'pro'")
    pro = c.fetchone()[0]
    user = get_user_model().objects.create(username="kept@example.com", email="kept@example.com")
    c.execute("INSERT INTO accounts_account (owner_id, plan_id, credit_balance, signing_secret,"
              " previous_signing_secret, public_id, created_at) VALUES (%s, %s, 7, 'whsec_x', '',"
              " '0f8fad5b-d9cb-469f-a165-70867728950e', CURRENT_TIMESTAMP)", [user.pk, pro])
"""

AFTER_CHECK = """
from accounts.models import Account, Plan
print(sorted(Plan.objects.values_list("code", flat=True)))
kept = Account.objects.get(owner__username="kept@example.com")
print(kept.plan.code, kept.credit_balance, Plan._meta.db_table)
"""


@pytest.fixture
def fresh_database(tmp_path: Path) -> Iterator[str]:
    """A database no test uses: a new SQLite file, or a new PostgreSQL database beside the suite's."""
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        yield f"sqlite:///{tmp_path / 'migrations.sqlite3'}"
        return
    server, _, _ = url.rpartition("/")
    name = f"verifier_migrations_{os.getpid()}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.execute(f"CREATE DATABASE {name}")
    try:
        yield f"{server}/{name}"
    finally:
        with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _manage(url: str, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"} | {"DATABASE_URL": url}
    run = subprocess.run([sys.executable, str(MANAGE), *args], env=env, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_the_plan_table_rename_keeps_every_plan_and_the_accounts_on_them(fresh_database: str) -> None:
    _manage(fresh_database, "migrate", "--noinput", "-v0")
    _manage(fresh_database, "migrate", "accounts", "0006", "--noinput", "-v0")  # the schema before the move
    _manage(fresh_database, "shell", "-c", BEFORE_DATA)
    _manage(fresh_database, "migrate", "--noinput", "-v0")
    plans, kept = _manage(fresh_database, "shell", "-v0", "-c", AFTER_CHECK).strip().splitlines()[-2:]
    assert plans == "['enterprise', 'free', 'pro', 'starter']"
    assert kept == "pro 7 accounts_plan"
