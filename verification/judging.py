"""Judging rows so that nothing one row holds fails the others (docs/deep.md, "International
addresses and bad rows"): the single request, the batch and the bulk chunk all judge through here."""

from __future__ import annotations

from lib import metrics
from lib.outages import OUTAGES
from verification.engine import SubStatus, Verdict
from verification.engine.core import Judge, failed_verdict, verdicts_isolated
from verification.engine.egress import Egress
from verification.engine.modes import ValidationMode
from verification.models import Objection


def rows_judged(emails: list[str], judge: Judge, *, mode: ValidationMode) -> list[Verdict]:
    """`judge(emails)`, a row whose judging raises answered `unknown` / `verification_failed`
    (logged and counted); an outage of ours (lib/outages.py) propagates, blaming no row."""
    verdicts = verdicts_isolated(emails, judge, mode=mode, passthrough=OUTAGES)
    failed = sum(verdict.sub_status is SubStatus.VERIFICATION_FAILED for verdict in verdicts)
    if failed:
        metrics.rows_failed(failed, mode=mode)
    return verdicts


def rows_judged_unless_objected(emails: list[str], judge: Judge, *, mode: ValidationMode) -> list[Verdict]:
    """`rows_judged` for a bulk chunk: a row whose person objected (docs/privacy.md) is not judged (no
    DNS, no mail server asked, nothing stored) and answers `unknown` / `address_objected`."""
    objected = Objection.objects.among(emails)
    if not objected:
        return rows_judged(emails, judge, mode=mode)
    judged = iter(rows_judged([email for email in emails if email not in objected], judge, mode=mode))
    return [
        failed_verdict(email, mode=mode, sub_status=SubStatus.ADDRESS_OBJECTED) if email in objected else next(judged)
        for email in emails
    ]


def is_free(verdict: Verdict) -> bool:
    """A bulk row that costs nothing: one not judged because its person objected. Its credit, reserved
    with its chunk's, goes back in the chunk's release (jobs/chunk_runs.py `chunk_finish`)."""
    return verdict.sub_status is SubStatus.ADDRESS_OBJECTED


def region_closed(verdict: Verdict, egresses: tuple[Egress, ...] | None) -> bool:
    """A deep row answered `smtp_blocked` because no egress of its account's probe region was healthy
    (`egresses` empty: verification/egresses.py `egresses_of_region`): no session was opened, and
    the fault is ours, so it is free."""
    return egresses == () and verdict.sub_status is SubStatus.SMTP_BLOCKED
