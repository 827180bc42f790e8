"""The one place verification's recurring work is declared (as jobs/queue.py and billing/queue.py are
for theirs): the hourly prune, the global catch-all rate refreshed every minute, and the egresses'
self-checks. It deletes what
has expired in every app (lib/prune.py finds each model with an indexed `expires_at`), so its entry
point is that function, not a task of this app; it is kept here because verification's caches are
what it was first written for, and the schedule keeps its name so databases that already hold it are
updated in place."""

from __future__ import annotations

from lib.schedules import Every

# Kept in the database by `verification/apps.py` at every migrate.
SCHEDULES = (
    Every(60, "verification: prune expired rows", "lib.prune.prune_expired"),
    # Reported outcomes' global catch-all rate, read by every catch-all answer (verification/outcomes.py).
    Every(1, "verification: global catch-all rate", "verification.outcomes.global_catch_all_rate_refresh"),
    # The egresses' identity (hourly) and blocklist (VERIFIER_SMTP_DNSBL_INTERVAL_SECONDS) checks, each
    # run when due (verification/egress_checks.py): a new egress is checked within a minute of the start.
    Every(1, "verification: egress self-checks", "verification.egresses.egress_self_checks_run"),
)
