"""Schema moves keep the data they move."""

from __future__ import annotations

from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests.support.db import committed_db

BEFORE = [("accounts", "0006_plan_from_billing")]
AFTER = [("accounts", "0007_plan_table_renamed")]


def _migrate(targets: list[tuple[str, str]]) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return MigrationExecutor(connection)


@committed_db  # serialized rollback: a committed_db test run before it leaves the tables flushed, plans too
def test_the_plan_table_rename_keeps_every_plan_and_the_accounts_on_them() -> None:
    old = _migrate(BEFORE).loader.project_state(BEFORE).apps
    User, Plan, Account = (
        old.get_model(*name) for name in (("auth", "User"), ("accounts", "Plan"), ("accounts", "Account"))
    )
    assert Plan._meta.db_table == "billing_plan"
    pro = Plan.objects.get(code="pro")
    user = User.objects.create(username="kept@example.com", email="kept@example.com")
    Account.objects.create(owner=user, plan=pro, credit_balance=7)
    plans = sorted(Plan.objects.values_list("code", "name", "allows_bulk", "requests_per_second"))
    try:
        new = _migrate(AFTER).loader.project_state(AFTER).apps
        NewPlan, NewAccount = new.get_model("accounts", "Plan"), new.get_model("accounts", "Account")
        assert NewPlan._meta.db_table == "accounts_plan"
        assert sorted(NewPlan.objects.values_list("code", "name", "allows_bulk", "requests_per_second")) == plans
        kept = NewAccount.objects.get(owner__username="kept@example.com")
        assert (kept.plan.code, kept.credit_balance) == ("pro", 7)
    finally:
        _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
