"""Deep verification of one address (POST /v1/verify, validation_mode deep) against the MX farm:
every row of the verdict table, the fast rules first, the shared caches, the time limit."""

from __future__ import annotations

import logging
import re
import time
from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.test import Client
from django.urls import reverse

from lib.address_keys import address_key
from tests.conftest import Persona
from tests.support.dns_server import HOST, MX, DnsServer
from tests.support.mx_farm import MxFarm
from tests.support.portal import logged_in
from tests.verification.conftest import deep, verdict_of
from verification import deep as deep_module
from verification.models import CatchAllAnswer, MailboxAnswer

pytestmark = pytest.mark.usefixtures("deep_farm")


def test_existing_mailbox_of_a_domain_that_refuses_strangers_is_valid(owner: Persona) -> None:
    body = deep(owner, "Alice@Mailbox.deepfarm.net")
    assert verdict_of(body) == ("valid", None, True, True, False)
    assert body["validation_mode"] == "deep"
    assert body["confidence"] == "high" and body["score"] >= 90
    assert body["email"] == "alice@mailbox.deepfarm.net"


def test_role_address_that_exists_is_risky_role_based(owner: Persona) -> None:
    body = deep(owner, "info@mailbox.deepfarm.net")
    assert verdict_of(body) == ("risky", "role_based", False, True, False)


def test_domain_accepting_any_address_is_risky_catch_all(owner: Persona) -> None:
    assert verdict_of(deep(owner, "whoever@anything.deepfarm.net")) == ("risky", "catch_all", False, None, True)


@pytest.mark.parametrize(
    ("email", "sub_status"),
    [("nobody@mailbox.deepfarm.net", "mailbox_not_found"), ("gone@mailbox.deepfarm.net", "mailbox_disabled")],
)
def test_refused_mailbox_is_invalid(owner: Persona, email: str, sub_status: str) -> None:
    body = deep(owner, email)
    assert verdict_of(body) == ("invalid", sub_status, False, False, False)
    assert body["confidence"] == "high"


@pytest.mark.parametrize("local", ["full", "quota"])
def test_full_mailbox_is_risky(owner: Persona, local: str) -> None:
    assert verdict_of(deep(owner, f"{local}@mailbox.deepfarm.net")) == ("risky", "mailbox_full", False, None, False)


def test_greylisted_address_is_unknown_and_not_cached_then_clears(owner: Persona, deep_farm: MxFarm) -> None:
    assert verdict_of(deep(owner, "alice@greylist.deepfarm.net")) == ("unknown", "greylisted", False, None, None)
    deep_farm.greylist_over()  # as postgrey lets a sender through after minutes
    body = deep(owner, "alice@greylist.deepfarm.net")
    assert verdict_of(body) == ("valid", None, True, True, False)
    assert body["cached"] is False


def test_catch_all_probe_still_greylisted_leaves_the_address_unknown(owner: Persona) -> None:
    assert verdict_of(deep(owner, "alice@probegrey.deepfarm.net")) == ("unknown", "greylisted", False, None, None)


@pytest.mark.parametrize(
    "email",
    ["alice@listed.deepfarm.net", "nobody@policy.deepfarm.net", "alice@badsender.deepfarm.net"],
    ids=["banner-names-a-blocklist", "rcpt-refused-by-policy", "mail-from-refused"],
)
def test_policy_or_blocklist_refusal_is_never_invalid(owner: Persona, email: str) -> None:
    assert verdict_of(deep(owner, email)) == ("unknown", "smtp_blocked", False, None, None)


def test_no_catch_all_probe_follows_a_policy_refusal_of_the_address(owner: Persona, farm: MxFarm) -> None:
    assert verdict_of(deep(owner, "nobody@policy.deepfarm.net")) == ("unknown", "smtp_blocked", False, None, None)
    assert farm.stats.recipients == ["nobody@policy.deepfarm.net"]


def test_the_catch_all_probe_still_follows_an_address_accepted_beside_one_refused_by_policy(
    owner: Persona, farm: MxFarm
) -> None:
    response = owner.post_json(
        "/v1/verify/batch",
        {"emails": ["alice@policy.deepfarm.net", "nobody@policy.deepfarm.net"], "validation_mode": "deep"},
    )
    assert [row["sub_status"] for row in response.json()["data"]] == ["smtp_blocked", "smtp_blocked"]
    assert len(farm.stats.recipients) == 3  # the probe, refused by policy too, leaves alice unknown


def test_no_mx_accepting_a_connection_is_unreachable(owner: Persona) -> None:
    assert verdict_of(deep(owner, "alice@alldead.deepfarm.net")) == ("unknown", "smtp_unreachable", False, None, None)


def test_a_421_at_the_banner_is_an_answer_asked_again_later_not_unreachable(owner: Persona) -> None:
    assert verdict_of(deep(owner, "alice@toobusy.deepfarm.net")) == ("unknown", "greylisted", False, None, None)


def test_tarpit_cannot_hold_a_request_past_twice_the_timeout_plus_five_seconds(owner: Persona, settings: Any) -> None:
    settings.VERIFIER_SMTP_TIMEOUT = 0.5
    started = time.monotonic()
    body = deep(owner, "alice@tarpit.deepfarm.net")
    assert verdict_of(body) == ("unknown", "smtp_unreachable", False, None, None)
    assert time.monotonic() - started < 2 * settings.VERIFIER_SMTP_TIMEOUT + 5


def test_silent_first_mx_passes_the_turn_to_the_next(owner: Persona, settings: Any) -> None:
    settings.VERIFIER_SMTP_TIMEOUT = 1.5
    assert verdict_of(deep(owner, "alice@tarpitfirst.deepfarm.net"))[0] == "valid"


def test_dead_first_mx_passes_the_turn_to_the_next(owner: Persona, farm: MxFarm) -> None:
    assert verdict_of(deep(owner, "alice@deadfirst.deepfarm.net"))[0] == "valid"
    assert farm.stats.sessions["127.0.0.2"] == 1


def test_recipient_refused_as_one_too_many_is_asked_in_a_session_of_its_own(owner: Persona, farm: MxFarm) -> None:
    assert verdict_of(deep(owner, "alice@onercpt.deepfarm.net")) == ("valid", None, True, True, False)
    assert farm.stats.sessions["127.0.0.8"] == 2
    assert farm.stats.commands["RSET"] == 1


def test_domains_naming_the_same_mx_hosts_share_a_session(
    owner: Persona, farm: MxFarm, _resolver_on_loopback: DnsServer
) -> None:
    """As every domain one provider hosts does (Google Workspace's all name aspmx.l.google.com)."""
    domains = [f"tenant{i}.deepfarm.net" for i in range(3)]
    for domain in domains:
        _resolver_on_loopback.set(domain, MX("mx.shared-host.deepfarm.net"))
    _resolver_on_loopback.set("mx.shared-host.deepfarm.net", HOST("127.0.0.2"))
    emails = [f"{local}@{domain}" for domain in domains for local in ("alice", "nobody")]
    response = owner.post_json("/v1/verify/batch", {"emails": emails, "validation_mode": "deep"})
    assert response.status_code == 200, response.content
    sub_statuses = [result["sub_status"] for result in response.json()["data"]]
    assert sub_statuses == [None, "mailbox_not_found"] * 3
    assert farm.stats.sessions["127.0.0.2"] == 1 and farm.stats.commands["MAIL"] == 1
    # Six addresses; no catch-all probe: each domain refused nobody@ as unknown, so it is no catch-all.
    assert len(farm.stats.recipients) == 6


def test_a_batch_in_parts_asks_its_later_parts_in_the_session_open_at_their_address(
    owner: Persona, farm: MxFarm, _resolver_on_loopback: DnsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Planned a part at a time (verification/deep.py, PART_ROWS), a batch gets the verdicts and the
    sessions it gets in one part: the session opened for the first part's rows at an address waits
    for the later parts' rows there rather than ending, and no address gets a session more."""
    monkeypatch.setattr(deep_module, "PART_ROWS", 2)
    domains = [f"tenant{i}.deepfarm.net" for i in range(3)]
    for domain in domains:
        _resolver_on_loopback.set(domain, MX("mx.shared-host.deepfarm.net"))
    _resolver_on_loopback.set("mx.shared-host.deepfarm.net", HOST("127.0.0.2"))
    emails = [f"{local}@{domain}" for domain in domains for local in ("alice", "nobody")]
    emails += ["whoever@anything.deepfarm.net", "info@mailbox.deepfarm.net", "Alice@tenant0.deepfarm.net"]
    response = owner.post_json("/v1/verify/batch", {"emails": emails, "validation_mode": "deep"})
    assert response.status_code == 200, response.content
    results = response.json()["data"]
    assert [(r["status"], r["sub_status"]) for r in results] == [
        *[("valid", None), ("invalid", "mailbox_not_found")] * 3,
        ("risky", "catch_all"),
        ("risky", "role_based"),
        ("valid", None),  # the first row again, in another part: asked once
    ]
    # Six addresses at 127.0.0.2 over three parts, and info@mailbox (on 127.0.0.2 too): one session.
    assert farm.stats.sessions["127.0.0.2"] == 1 and farm.stats.commands["MAIL"] == 2  # and the catch-all's
    assert farm.stats.recipients.count("alice@tenant0.deepfarm.net") == 1


def test_a_domain_that_refused_an_address_as_unknown_is_not_probed_and_is_no_catch_all(
    owner: Persona, farm: MxFarm, _resolver_on_loopback: DnsServer
) -> None:
    """Its probe's random address would be refused the same way: the answer is known without asking."""
    for domain in ("refuses.deepfarm.net", "accepts.deepfarm.net"):
        _resolver_on_loopback.set(domain, MX("mx.shared-host.deepfarm.net"))
    _resolver_on_loopback.set("mx.shared-host.deepfarm.net", HOST("127.0.0.2"))
    emails = ["alice@refuses.deepfarm.net", "nobody@refuses.deepfarm.net", "alice@accepts.deepfarm.net"]
    response = owner.post_json("/v1/verify/batch", {"emails": emails, "validation_mode": "deep"})
    assert response.status_code == 200, response.content
    results = response.json()["data"]
    assert [(r["status"], r["checks"]["is_catch_all"]) for r in results] == [
        ("valid", False),
        ("invalid", False),
        ("valid", False),
    ]
    probes = [r for r in farm.stats.recipients if r not in emails]
    assert [probe.rpartition("@")[2] for probe in probes] == ["accepts.deepfarm.net"]  # asked: nothing refused there
    assert CatchAllAnswer.objects.fresh_many(["refuses.deepfarm.net", "accepts.deepfarm.net"]) == {
        "refuses.deepfarm.net": False,
        "accepts.deepfarm.net": False,
    }


def test_starttls_is_used_when_offered(owner: Persona, farm: MxFarm) -> None:
    assert verdict_of(deep(owner, "alice@tls.deepfarm.net"))[0] == "valid"
    assert farm.stats.tls_sessions == 1


def test_dialogue_is_ehlo_our_name_mail_from_our_sender_then_rcpt(owner: Persona, farm: MxFarm) -> None:
    deep(owner, "alice@mailbox.deepfarm.net")
    assert farm.stats.recipients[0] == "alice@mailbox.deepfarm.net"
    assert farm.stats.recipients[1].endswith("@mailbox.deepfarm.net") and len(farm.stats.recipients) == 2
    assert farm.stats.commands["EHLO"] == 1 and farm.stats.commands["MAIL"] == 1 and farm.stats.commands["QUIT"] == 1


@pytest.mark.parametrize(
    ("email", "sub_status"),
    [
        ("not an address", "invalid_syntax"),
        ("alice@nxdomain.com", "no_mx_record"),
        ("alice@mailinator.com", "disposable"),
    ],
)
def test_fast_rules_decide_first_and_open_no_session(owner: Persona, farm: MxFarm, email: str, sub_status: str) -> None:
    body = deep(owner, email)
    assert body["sub_status"] == sub_status
    assert sum(farm.stats.sessions.values()) == 0


def test_mx_on_a_private_network_is_never_contacted(owner: Persona, farm: MxFarm, settings: Any) -> None:
    settings.VERIFIER_SMTP_ALLOW_PRIVATE_NETWORKS = False
    assert verdict_of(deep(owner, "alice@mailbox.deepfarm.net")) == ("unknown", "smtp_unreachable", False, None, None)
    assert sum(farm.stats.sessions.values()) == 0


def test_a_deep_verification_costs_one_credit(owner: Persona) -> None:
    before = owner.account.credit_balance
    response = owner.post_json("/v1/verify", {"email": "alice@mailbox.deepfarm.net", "validation_mode": "deep"})
    assert response.headers["X-Credits-Remaining"] == str(before - 1)


def test_deep_verdict_is_cached_per_account_apart_from_fast(owner: Persona, farm: MxFarm) -> None:
    assert deep(owner, "alice@mailbox.deepfarm.net")["cached"] is False
    again = deep(owner, "alice@mailbox.deepfarm.net")
    assert again["cached"] is True and again["validation_mode"] == "deep"
    fast = owner.verify("alice@mailbox.deepfarm.net").json()
    assert fast["cached"] is False and fast["validation_mode"] == "fast" and fast["checks"]["smtp_valid"] is None
    assert farm.stats.sessions["127.0.0.2"] == 1


def test_mailbox_answer_is_shared_across_accounts_but_cached_flag_is_not(
    owner: Persona, outsider: Persona, farm: MxFarm
) -> None:
    deep(owner, "alice@mailbox.deepfarm.net")
    body = deep(outsider, "alice@mailbox.deepfarm.net")
    assert body["cached"] is False and body["status"] == "valid"
    assert farm.stats.recipients.count("alice@mailbox.deepfarm.net") == 1


def test_catch_all_answer_is_kept_a_day_then_asked_again(owner: Persona, outsider: Persona, farm: MxFarm) -> None:
    deep(owner, "alice@mailbox.deepfarm.net")
    deep(outsider, "nobody@mailbox.deepfarm.net")
    assert len(farm.stats.recipients) == 3  # alice, the probe once, nobody
    with time_machine.travel(timedelta(hours=25)):
        deep(owner, "alice@mailbox.deepfarm.net")
    assert len(farm.stats.recipients) == 5  # alice and the probe again: both answers expired


def test_expired_answers_are_pruned(owner: Persona) -> None:
    from lib.prune import prune_expired

    deep(owner, "alice@mailbox.deepfarm.net")
    deep(owner, "nobody@mailbox.deepfarm.net")
    with time_machine.travel(timedelta(hours=2)):
        assert prune_expired()["MailboxAnswer"] == 1  # the refusal (1 h); the valid answer lives 24 h
    with time_machine.travel(timedelta(hours=25)):
        pruned = prune_expired()
    assert pruned["MailboxAnswer"] == 1 and pruned["CatchAllAnswer"] == 1
    assert not MailboxAnswer.objects.exists() and not CatchAllAnswer.objects.exists()


# Every fast verdict row (tests/verification/test_verify_verdicts.py), and the fast rules' ties.
FAST_CORPUS = [
    "not-an-address",
    "someone@silent.com",
    "someone@servfail.com",
    "someone@nowhere-at-all.com",
    "someone@aonly.com",
    "someone@nullmx.com",
    "someone@mailinator.com",
    "info@good.com",
    "jane@good.com",
    "info@silent.com",
    "admin@mailinator.com",
    "jane@gmsil.com",
    "alice@mailbox.deepfarm.net",
]


def test_fast_answers_are_byte_for_byte_the_same_with_deep_mode_on(
    owner: Persona, outsider: Persona, settings: Any, farm: MxFarm
) -> None:
    with time_machine.travel("2026-11-25 12:00:00+00:00", tick=False):
        settings.VERIFIER_DEEP_MODE = False
        off = owner.post_json("/v1/verify/batch", {"emails": FAST_CORPUS})
        settings.VERIFIER_DEEP_MODE = True  # the other account: no verdict of the first is cached for it
        on = outsider.post_json("/v1/verify/batch", {"emails": FAST_CORPUS})
    assert off.status_code == on.status_code == 200
    measured = re.compile(rb'"response_time_ms":\d+')  # the one field that is a measurement, not a verdict
    assert measured.sub(b"", on.content) == measured.sub(b"", off.content)
    assert len(measured.findall(on.content)) == len(FAST_CORPUS)
    assert sum(farm.stats.sessions.values()) == 0


def test_deep_off_is_refused_as_before(owner: Persona, settings: Any) -> None:
    settings.VERIFIER_DEEP_MODE = False
    response = owner.post_json("/v1/verify", {"email": "alice@mailbox.deepfarm.net", "validation_mode": "deep"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "deep_mode_disabled"


def test_portal_offers_the_mode_choice_only_when_deep_is_on(owner: Persona, settings: Any) -> None:
    page = logged_in(owner).get(reverse("verify")).content.decode()
    assert 'name="validation_mode"' in page and 'value="deep"' in page
    settings.VERIFIER_DEEP_MODE = False
    assert 'name="validation_mode"' not in logged_in(owner).get(reverse("verify")).content.decode()


def test_portal_verifies_deep_for_one_credit(owner: Persona) -> None:
    before = owner.account.credit_balance
    client = logged_in(owner)
    page = client.post(reverse("verify"), {"email": "nobody@mailbox.deepfarm.net", "validation_mode": "deep"})
    html = page.content.decode()
    assert "data-verdict-status>invalid<" in html and "mailbox_not_found" in html and "data-validation-mode" in html
    owner.account.refresh_from_db()
    assert owner.account.credit_balance == before - 1


def test_portal_refuses_deep_when_it_is_off(owner: Persona, settings: Any) -> None:
    settings.VERIFIER_DEEP_MODE = False
    page = logged_in(owner).post(reverse("verify"), {"email": "alice@mailbox.deepfarm.net", "validation_mode": "deep"})
    assert "data-validation-mode" not in page.content.decode()  # the field is not there: a fast check


def test_staff_dashboard_counts_smtp_sessions_by_outcome_and_the_blocked_share(
    owner: Persona, admin_client_: Client
) -> None:
    deep(owner, "alice@mailbox.deepfarm.net")  # completed
    deep(owner, "alice@listed.deepfarm.net")  # blocked at the banner
    deep(owner, "nobody@policy.deepfarm.net")  # a policy refusal at RCPT: blocked
    deep(owner, "alice@alldead.deepfarm.net")  # nothing listens: an attempt, unreachable
    page = admin_client_.get("/admin/dashboard/").content.decode()
    found = dict(re.findall(r'data-figure="([^"]+)"[^>]*>(?:<th[^>]*>[^<]*</th><td>)?([^<]*)<', page))
    assert found["smtp-completed"] == "1" and found["smtp-blocked"] == "2" and found["smtp-unreachable"] == "1"
    assert found["smtp-blocked-share"] == "50.0%"


def test_a_refused_session_is_logged_with_the_mx_address_and_its_reply(
    owner: Persona, caplog: pytest.LogCaptureFixture
) -> None:
    """What an operator reads when smtp_blocked rises: which server said what (docs/deep.md)."""
    with caplog.at_level(logging.INFO, logger="verification.deep"):
        deep(owner, "alice@listed.deepfarm.net")  # blocked at the banner
        deep(owner, "alice@alldead.deepfarm.net")  # nothing listens
        deep(owner, "alice@mailbox.deepfarm.net")  # completed: nothing to say
    lines = [(record.levelname, record.getMessage()) for record in caplog.records if record.name == "verification.deep"]
    assert lines[0][0] == "WARNING"
    assert lines[0][1].startswith("SMTP session blocked at 127.0.0.5: 554 5.7.1 Service unavailable")
    assert "spamhaus" in lines[0][1]
    assert lines[1][0] == "INFO" and lines[1][1].startswith("SMTP session unreachable at 127.0.0.40: - connect:")
    assert len(lines) == 2


def test_staff_see_the_shared_answers_in_the_admin_read_only(owner: Persona, admin_client_: Client) -> None:
    deep(owner, "nobody@mailbox.deepfarm.net")
    page = admin_client_.get(
        reverse("admin:verification_mailboxanswer_changelist"), {"q": "Nobody@mailbox.deepfarm.net"}
    )
    assert page.status_code == 200 and "5.1.1" in page.content.decode()
    other = admin_client_.get(
        reverse("admin:verification_mailboxanswer_changelist"), {"q": "other@mailbox.deepfarm.net"}
    )
    assert "5.1.1" not in other.content.decode()
    page = admin_client_.get(reverse("admin:verification_catchallanswer_changelist"), {"q": "mailbox.deepfarm"})
    assert page.status_code == 200 and "mailbox.deepfarm.net" in page.content.decode()
    answer = MailboxAnswer.objects.get(address_key=address_key("nobody@mailbox.deepfarm.net"))
    change = reverse("admin:verification_mailboxanswer_change", args=[answer.pk])
    assert admin_client_.post(change, {"email": "x@y.z"}).status_code == 403
    assert admin_client_.get(reverse("admin:verification_mailboxanswer_add")).status_code == 403


def test_smtp_sessions_counter_for_prometheus(owner: Persona) -> None:
    from prometheus_client import REGISTRY

    before = REGISTRY.get_sample_value("verifier_smtp_sessions_total", {"outcome": "blocked"}) or 0
    deep(owner, "alice@listed.deepfarm.net")
    assert REGISTRY.get_sample_value("verifier_smtp_sessions_total", {"outcome": "blocked"}) == before + 1


def test_portal_form_posted_without_a_mode_is_a_fast_check_as_before(owner: Persona, farm: MxFarm) -> None:
    page = logged_in(owner).post(reverse("verify"), {"email": "alice@mailbox.deepfarm.net"}).content.decode()
    assert "data-verdict-status>valid<" in page and "data-validation-mode" not in page
    assert sum(farm.stats.sessions.values()) == 0
