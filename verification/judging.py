"""Judging rows so that nothing one row holds fails the others (docs/deep.md, "International
addresses and bad rows"): the single request, the batch and the bulk chunk all judge through here."""

from __future__ import annotations

from lib import metrics
from lib.outages import OUTAGES
from verification.engine import SubStatus, Verdict
from verification.engine.core import Judge, verdicts_isolated


def rows_judged(emails: list[str], judge: Judge, *, mode: str) -> list[Verdict]:
    """`judge(emails)`, a row whose judging raises answered `unknown` / `verification_failed`
    (logged and counted); an outage of ours (lib/outages.py) propagates, blaming no row."""
    verdicts = verdicts_isolated(emails, judge, mode=mode, passthrough=OUTAGES)
    failed = sum(verdict.sub_status is SubStatus.VERIFICATION_FAILED for verdict in verdicts)
    if failed:
        metrics.rows_failed(failed, mode=mode)
    return verdicts
