"""The idle window of a bulk deep batch (verification/engine/smtp_scheduling.py, "The idle window";
verification/deep.py `_while_asked`): once its last part is planned, the worker stores the answers
that came in and builds the verdicts they decide while the sessions still run, and the end reuses
only what the final answers agree with. Also: a batch's first part waits for its sessions to be
past their greeting before the next part is planned."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest

from tests.support.deep import SLOW, prober
from tests.support.dns_server import HOST, MX, DnsServer
from tests.support.mx_farm import MxFarm
from verification import deep as deep_module
from verification.deep import deep_verify_many
from verification.engine import Status, SubStatus, Verdict, smtp_scheduling
from verification.engine.core import failed_verdict
from verification.engine.modes import ValidationMode
from verification.engine.smtp_answers import OUT_OF_TIME, Answer
from verification.engine.smtp_replies import Meaning, Reply
from verification.engine.smtp_scheduling import run_streamed
from verification.models import CatchAllAnswer, MailboxAnswer

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("deep_farm")]

ACCEPTED = Answer(Reply(250, "2.1.5 Ok"), Meaning.ACCEPTED)
UNKNOWN_USER = Answer(Reply(550, "5.1.1 No such user"), Meaning.NO_MAILBOX)


def on_slow_host(dns: DnsServer, names: list[str]) -> list[str]:
    """Domains sharing one MX host on the farm's slow address (every reply 50 ms late): one group."""
    domains = [f"{name}.idle.deepfarm.net" for name in names]
    for domain in domains:
        dns.set(domain, MX("mx.idle.deepfarm.net"))
    dns.set("mx.idle.deepfarm.net", HOST(SLOW))
    return domains


def test_a_batch_stores_answers_and_builds_verdicts_while_its_last_sessions_run(
    _resolver_on_loopback: DnsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three domains whose catch-all answer is cached and four to probe share one session: the
    probes go in a write of their own, after their domains' replies (200 ms at this address), and
    meanwhile the idle work has stored the seven answers and built the three verdicts no probe
    decides. The batch's verdicts are those very objects."""
    monkeypatch.setattr(smtp_scheduling, "IDLE_SLICE", 0.005)
    cached = on_slow_host(_resolver_on_loopback, ["cached0", "cached1", "cached2"])
    probed = on_slow_host(_resolver_on_loopback, ["probed0", "probed1", "probed2", "probed3"])
    CatchAllAnswer.objects.store_many(dict.fromkeys(cached, False))
    seen: list[tuple[int, int]] = []
    kept: list[Any] = []

    def watched(plan: Any, fast: list[Verdict], done: Any, news: list[tuple[str, Answer]]) -> None:
        deep_module_while_asked(plan, fast, done, news)
        seen.append((MailboxAnswer.objects.count(), len(done.verdicts)))
        kept[:] = [done]

    deep_module_while_asked = deep_module._while_asked
    monkeypatch.setattr(deep_module, "_while_asked", watched)
    emails = [f"alice@{domain}" for domain in cached + probed]
    verdicts = deep_verify_many(emails, seconds=30)
    assert [verdict.status for verdict in verdicts] == [Status.VALID] * 7
    assert (7, 3) in seen  # the seven answers stored, the cached domains' three verdicts built
    (done,) = kept
    assert set(done.verdicts) >= set(emails[:3])
    assert all(verdicts[emails.index(email)] is made for email, (_, _, made) in done.verdicts.items())
    assert MailboxAnswer.objects.count() == 7
    assert CatchAllAnswer.objects.fresh_many(probed) == dict.fromkeys(probed, False)


def test_a_verdict_built_early_is_used_only_where_the_final_answers_agree() -> None:
    """An answer read in the idle window may change (a session refused for its egress's reputation
    is asked again through another): the end builds the verdict again from the final answer, and
    stores that answer over the one stored early."""
    email, domain = "alice@changed.deepfarm.net", "changed.deepfarm.net"
    plan = deep_module._Plan(b"probe key", date.today(), domain_of={email: domain}, catch_all={domain: False})
    plan.asked.add(email)
    fast = failed_verdict(email, mode=ValidationMode.DEEP)
    early = deep_module._Early(rows={email: fast})
    deep_module._looked_at(plan, {email: ACCEPTED}, early)
    (_, _, made) = early.verdicts[email]
    assert made.status is Status.VALID
    assert MailboxAnswer.objects.fresh_many({email: domain})[email] == ACCEPTED

    same = Answer(Reply(250, "2.1.5 Ok"), Meaning.ACCEPTED)  # equal, not the same object
    assert deep_module._verdict(fast, plan, {email: same}, early) is made
    changed = deep_module._verdict(fast, plan, {email: UNKNOWN_USER}, early)
    assert (changed.status, changed.sub_status) == (Status.INVALID, SubStatus.MAILBOX_NOT_FOUND)
    deep_module._store(plan, {email: UNKNOWN_USER}, early)
    assert MailboxAnswer.objects.fresh_many({email: domain})[email].meaning is Meaning.NO_MAILBOX


def test_the_first_parts_sessions_are_past_their_greeting_before_the_next_part_is_planned(
    _resolver_on_loopback: DnsServer, farm: MxFarm, tmp_path: Path
) -> None:
    """At the slow address the banner and the EHLO reply take 100 ms: the planning of the second
    part waits for them (at most GREETING_WAIT), so the sessions are not held at their greeting
    while it runs."""
    first, second = on_slow_host(_resolver_on_loopback, ["first", "second"])
    asking = prober(_resolver_on_loopback, farm, tmp_path)
    greeted: list[bool] = []

    def parts() -> Any:
        yield {("mx.idle.deepfarm.net",): [f"alice@{first}"]}
        greeted.append(bool(asking._opened) and all(session.asking for session in asking._opened.values()))
        yield {("mx.idle.deepfarm.net",): [f"alice@{second}"]}

    findings = run_streamed(asking, parts(), 30.0, OUT_OF_TIME)
    assert greeted == [True]
    assert {findings.answers[f"alice@{d}"].meaning for d in (first, second)} == {Meaning.ACCEPTED}
    assert farm.stats.sessions[SLOW] == 1  # the second part's row asked in the session open there
