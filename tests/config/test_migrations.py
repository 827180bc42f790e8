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

MANAGE = Path(__file__).resolve().parents[2] / "manage.py"
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


BEFORE_MEMBERS = """
from django.contrib.auth import get_user_model
from django.db import connection
from lib.tokens import sha256_hex
with connection.cursor() as c:
    c.execute("SELECT id FROM accounts_plan WHERE code = 'starter'")
    starter = c.fetchone()[0]
    for n, email in enumerate(["first@example.com", "second@example.com"]):
        user = get_user_model().objects.create(username=email, email=email)
        c.execute("INSERT INTO accounts_account (owner_id, plan_id, credit_balance, signing_secret,"
                  " previous_signing_secret, public_id, created_at) VALUES (%s, %s, %s, 'whsec_x', '',"
                  " %s, CURRENT_TIMESTAMP)", [user.pk, starter, 40 + n, f"0f8fad5b-d9cb-469f-a165-7086772895{n}e"])
        c.execute("SELECT id FROM accounts_account WHERE owner_id = %s", [user.pk])
        account = c.fetchone()[0]
        c.execute("INSERT INTO accounts_apikey (account_id, name, prefix, key_hash, created_at)"
                  " VALUES (%s, 'old', 'ev_live_old', %s, CURRENT_TIMESTAMP)", [account, sha256_hex(f"ev_live_old{n}")])
"""

AFTER_MEMBERS = """
from accounts.models import Account, ApiKey, account_for
from django.contrib.auth import get_user_model
for email, n in [("first@example.com", 0), ("second@example.com", 1)]:
    user = get_user_model().objects.get(username=email)
    account = account_for(user)
    member = account.memberships.get()
    key = ApiKey.objects.find(f"ev_live_old{n}")
    print(account.email, account.credit_balance, member.user.email, member.role, key.account.pk == account.pk,
          key.scope, key.creator_role)
"""


def test_every_existing_account_gets_its_person_as_owner_member_and_its_keys_keep_working(
    fresh_database: str,
) -> None:
    _manage(fresh_database, "migrate", "--noinput", "-v0")
    _manage(fresh_database, "migrate", "accounts", "0007", "--noinput", "-v0")  # the schema before members
    _manage(fresh_database, "shell", "-c", BEFORE_MEMBERS)
    _manage(fresh_database, "migrate", "--noinput", "-v0")
    lines = _manage(fresh_database, "shell", "-v0", "-c", AFTER_MEMBERS).strip().splitlines()[-2:]
    assert lines == [
        "first@example.com 40 first@example.com owner True full owner",
        "second@example.com 41 second@example.com owner True full owner",
    ]


MODES_WRITTEN = """
from datetime import timedelta
from django.utils import timezone
from accounts.services import account_open
from apikit.models import IdempotencyRecord
from jobs.models import Job
from verification.models import CachedVerdict
account = account_open(email="modes@example.com", password=None, issue_key=True).account
later = timezone.now() + timedelta(days=1)
Job.objects.create(id="job_test_deep", account=account, input_name="in", total=1, key_mode="test",
                   validation_mode="deep")
Job.objects.create(id="job_live_fast", account=account, input_name="in", total=1)
CachedVerdict.objects.create(account=account, email="a@good.com", validation_mode="deep", status="valid", verdict={},
                             created_at=timezone.now(), expires_at=later)
IdempotencyRecord.objects.create(account=account, key="k1", key_mode="test", fingerprint="f", expires_at=later)
"""

MODES_BEFORE = """
from django.db import connection
with connection.cursor() as c:
    for table, column in [("accounts_apikey", "name"), ("jobs_job", "id"), ("verification_cachedverdict", "email"),
                          ("verification_idempotencyrecord", "key")]:
        c.execute(f"SELECT {column}, mode FROM {table}")
        print(sorted(c.fetchall()))
"""

MODES_AFTER = """
from accounts.models import ApiKey
from apikit.models import IdempotencyRecord
from jobs.models import Job
from verification.models import CachedVerdict
print(sorted(ApiKey.objects.values_list("name", "key_mode")))
print(sorted(Job.objects.values_list("id", "key_mode", "validation_mode")))
print(list(CachedVerdict.objects.values_list("email", "validation_mode")))
print(list(IdempotencyRecord.objects.values_list("key", "key_mode")))
"""


def test_the_mode_renames_keep_every_key_job_cached_verdict_and_idempotent_reply(fresh_database: str) -> None:
    """`mode` was live/test on keys, jobs and idempotent replies and fast/deep on cached verdicts:
    renamed key_mode and validation_mode, each row keeps its value, both ways."""
    _manage(fresh_database, "migrate", "--noinput", "-v0")
    _manage(fresh_database, "shell", "-c", MODES_WRITTEN)
    for app, before in [("accounts", "0014"), ("jobs", "0009"), ("api", "0002"), ("verification", "0004")]:
        _manage(fresh_database, "migrate", app, before, "--noinput", "-v0")  # the schema before the renames
    assert _manage(fresh_database, "shell", "-v0", "-c", MODES_BEFORE).strip().splitlines()[-4:] == [
        "[('Default', 'live'), ('Test', 'test')]",
        "[('job_live_fast', 'live'), ('job_test_deep', 'test')]",
        "[('a@good.com', 'deep')]",
        "[('k1', 'test')]",
    ]
    _manage(fresh_database, "migrate", "--noinput", "-v0")
    assert _manage(fresh_database, "shell", "-v0", "-c", MODES_AFTER).strip().splitlines()[-4:] == [
        "[('Default', 'live'), ('Test', 'test')]",
        "[('job_live_fast', 'live', 'fast'), ('job_test_deep', 'test', 'deep')]",
        "[('a@good.com', 'deep')]",
        "[('k1', 'test')]",
    ]


ADDRESSES_WRITTEN = """
from django.db import connection
from accounts.services import account_open
account = account_open(email="o@example.com", password=None, issue_key=False).account.pk
with connection.cursor() as c:
    for email, text, asked in [("jo@a.com", "<jo@a.com> unknown", "2026-11-01"), ("Jo@A.com", "newer", "2026-11-02"),
                               ("al@a.com", "ok", "2026-11-01")]:
        c.execute("INSERT INTO verification_mailboxanswer (email, code, text, meaning, asked_at, expires_at)"
                  " VALUES (%s, 550, %s, 'no_mailbox', %s, '2099-01-01')", [email, text, asked])
    for email in ["jo@a.com", "JO@a.com", "al@a.com"]:
        c.execute("INSERT INTO feedback_feedbackevent (account_id, email, domain, outcome, occurred_at, expires_at)"
                  " VALUES (%s, %s, 'a.com', 'delivered', '2026-11-01', '2099-01-01')", [account, email])
"""

ADDRESSES_AFTER = """
from feedback.models import FeedbackEvent
from lib.address_keys import address_key
from verification.models import MailboxAnswer
jo, al = address_key("jo@a.com"), address_key("al@a.com")
print(sorted((a.address_key == jo, a.text) for a in MailboxAnswer.objects.all()))
print(sorted(e.address_key == jo for e in FeedbackEvent.objects.all()),
      FeedbackEvent.objects.filter(address_key=al).count())
"""


def test_the_shared_stores_move_from_addresses_to_their_keys_keeping_the_newest_of_a_clash(
    fresh_database: str,
) -> None:
    _manage(fresh_database, "migrate", "--noinput", "-v0")
    _manage(fresh_database, "migrate", "verification", "0006", "--noinput", "-v0")  # before the keys
    _manage(fresh_database, "migrate", "feedback", "0001", "--noinput", "-v0")
    _manage(fresh_database, "shell", "-c", ADDRESSES_WRITTEN)
    _manage(fresh_database, "migrate", "--noinput", "-v0")
    assert _manage(fresh_database, "shell", "-v0", "-c", ADDRESSES_AFTER).strip().splitlines()[-2:] == [
        "[(False, 'ok'), (True, 'newer')]",
        "[False, True] 1",
    ]
