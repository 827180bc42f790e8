"""`python -m bench --only feedback` holds the issue's two bars on its synthetic world (bench/feedback.py)."""

from __future__ import annotations

import subprocess
import sys

from bench import feedback


def test_the_estimate_beats_the_global_rate_and_no_account_alone_changes_anothers_verdict() -> None:
    results = feedback.run()
    assert feedback.checks(results) == []
    assert all(r["poisoner_changed_alone"] == 0 for r in results)
    assert all(float(r["mse_estimate"]) < float(r["mse_global"]) for r in results)


def test_one_account_alone_moves_no_domains_estimate_by_more_than_the_bound() -> None:
    results = feedback.run()
    assert all(float(r["worst_flood_shift"]) <= feedback.MAX_SHIFT for r in results)  # type: ignore[arg-type]
    assert all(abs(float(r["poison_max_shift"])) <= feedback.MAX_SHIFT for r in results)  # type: ignore[arg-type]


def test_the_documented_command_runs_and_meets_both_bars() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--only", "feedback"], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "met: MSE below the global rate's on every seed" in done.stdout
