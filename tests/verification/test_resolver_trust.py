"""A broken resolver (NXDOMAIN, REFUSED or silence for every name) judges nothing: single verifies
answer `unknown` free of charge, /readyz, /metrics and the staff dashboard say so, and it all
recovers by itself. Bulk jobs: tests/jobs/test_resolver_trust_bulk.py and test_e2e_resolver.py."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from tests.conftest import Persona
from tests.support.db import committed_db
from tests.support.dns_server import MX, NXDOMAIN, REFUSED, SILENT, Behaviour, DnsServer
from tests.support.metrics import scrape, value
from tests.support.portal import logged_in
from tests.support.threads import run_at_once
from verification.models import DomainRecord
from verification.resolver import resolver_health

MODES = {"nxdomain for everything": NXDOMAIN, "refused for everything": REFUSED, "drops everything": SILENT}
UNKNOWN = {"status": "unknown", "sub_status": "dns_temporary_failure", "is_valid": False, "score": 30}


def balance(persona: Persona) -> int:
    persona.account.refresh_from_db()
    return persona.account.credit_balance


def verdict_of(body: dict[str, Any]) -> dict[str, Any]:
    return {key: body[key] for key in UNKNOWN}


def a_minute_later() -> Any:
    return time_machine.travel(timezone.now() + timedelta(seconds=61), tick=True)


@pytest.mark.parametrize("mode", MODES.values(), ids=MODES.keys())
def test_a_real_address_is_unknown_and_free_while_the_resolver_is_broken(
    owner: Persona, dns_server: DnsServer, mode: Behaviour
) -> None:
    dns_server.everything = mode
    before = balance(owner)
    response = owner.verify("someone@gmail.com")
    assert response.status_code == 200
    assert verdict_of(response.json()) == UNKNOWN
    assert response.json()["checks"]["domain_valid"] is False
    assert balance(owner) == before
    assert response["X-Credits-Remaining"] == str(before)


def test_no_address_is_judged_invalid_while_every_name_is_nxdomain(owner: Persona, dns_server: DnsServer) -> None:
    dns_server.everything = NXDOMAIN
    for email in ("someone@gmail.com", "jane@good.com", "x@nowhere-at-all.com"):
        assert owner.verify(email).json()["status"] == "unknown"


def test_answers_of_a_broken_resolver_are_cached_nowhere(owner: Persona, dns_server: DnsServer) -> None:
    dns_server.everything = NXDOMAIN
    owner.verify("someone@gmail.com")
    assert owner.verify("someone@gmail.com").json()["cached"] is False
    assert not DomainRecord.objects.filter(domain="gmail.com").exists()
    assert not owner.account.cached_verdicts.exists()


def test_it_recovers_by_itself_once_the_canaries_answer(owner: Persona, dns_server: DnsServer) -> None:
    dns_server.everything = NXDOMAIN
    assert owner.verify("someone@gmail.com").json()["status"] == "unknown"
    dns_server.everything = None
    with a_minute_later():
        before = balance(owner)
        assert owner.verify("someone@gmail.com").json()["status"] == "valid"
        assert owner.verify("x@nowhere-at-all.com").json()["status"] == "invalid"
        assert balance(owner) == before - 2


def test_the_finding_is_kept_a_minute_not_asked_again_for_each_verify(owner: Persona, dns_server: DnsServer) -> None:
    owner.verify("x@nowhere-at-all.com")  # a negative answer: the canaries are asked once
    asked = dns_server.queries
    for _ in range(3):
        owner.verify("y@also-nowhere.com")
    assert dns_server.queries == asked + 1  # the new domain itself, no canary


def test_a_healthy_resolver_still_judges_nxdomain_invalid_and_charges(owner: Persona) -> None:
    before = balance(owner)
    body = owner.verify("x@nowhere-at-all.com").json()
    assert (body["status"], body["sub_status"]) == ("invalid", "no_mx_record")
    assert balance(owner) == before - 1


def test_a_timeout_on_a_healthy_resolver_is_unknown_and_charged(owner: Persona) -> None:
    before = balance(owner)
    assert owner.verify("x@silent.com").json()["status"] == "unknown"
    assert balance(owner) == before - 1


def test_empty_canary_list_turns_the_check_off(owner: Persona, dns_server: DnsServer, settings: Any) -> None:
    settings.VERIFIER_DNS_CANARIES = []
    dns_server.everything = NXDOMAIN
    assert owner.verify("someone@gmail.com").json()["status"] == "invalid"
    assert "dns" not in Client().get("/readyz").json()["checks"]


def test_one_canary_answering_is_enough(owner: Persona, dns_server: DnsServer, settings: Any) -> None:
    settings.VERIFIER_DNS_CANARIES = ["gmail.com", "not-a-canary-really.com"]
    assert owner.verify("x@nowhere-at-all.com").json()["status"] == "invalid"


def test_lost_packets_do_not_make_a_good_resolver_look_broken(db: None, dns_server: DnsServer, settings: Any) -> None:
    settings.VERIFIER_DNS_CANARIES = ["gmail.com", "yahoo.com"]
    settings.VERIFIER_DNS_TIMEOUT, settings.VERIFIER_DNS_LIFETIME = 0.05, 0.15
    dns_server.loss = 0.3
    findings = [resolver_health(since=time.time()) for _ in range(40)]  # each a fresh check
    assert dns_server.dropped > 0
    assert not any(health is None or health.broken for health in findings)


def test_a_silent_resolver_is_found_broken_only_after_a_second_try(db: None, dns_server: DnsServer) -> None:
    dns_server.everything = SILENT
    asked = dns_server.queries
    health = resolver_health()
    assert health is not None and health.broken
    assert dns_server.queries - asked >= 2 * 3  # three canaries, each asked in two rounds


def test_readyz_is_503_with_a_dns_check_while_broken(db: None, dns_server: DnsServer) -> None:
    dns_server.everything = REFUSED
    response = Client().get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["dns"] == (
        "broken: every canary name failed (gmail.com failure, outlook.com failure, yahoo.com failure)"
    )


def test_readyz_dns_check_is_ok_on_a_healthy_resolver(db: None) -> None:
    assert Client().get("/readyz").json()["checks"]["dns"] == "ok"


def test_metrics_show_the_broken_resolver_and_count_withheld_verdicts(
    owner: Persona, dns_server: DnsServer, metrics_on: None
) -> None:
    assert value(scrape(), "verifier_dns_resolver_broken") == 0
    withheld = value(scrape(), "verifier_dns_verdicts_withheld_total", source="api")
    dns_server.everything = NXDOMAIN
    with a_minute_later():
        owner.verify("someone@gmail.com")
        samples = scrape()
    assert value(samples, "verifier_dns_resolver_broken") == 1
    assert value(samples, "verifier_dns_verdicts_withheld_total", source="api") == withheld + 1


def test_staff_dashboard_shows_the_broken_resolver_in_red(
    dns_server: DnsServer, admin_client_: Client, owner: Persona
) -> None:
    assert 'data-figure="dns-resolver"' not in admin_client_.get("/admin/dashboard/").content.decode()
    dns_server.everything = NXDOMAIN
    with a_minute_later():
        page = admin_client_.get("/admin/dashboard/").content.decode()
    assert '<p class="ops-alert" role="alert" data-figure="dns-resolver">The DNS resolver is broken' in page
    assert '<td data-figure="dns-state" class="ops-bad">broken</td>' in page


def test_the_portal_verify_is_free_too_while_broken(owner: Persona, dns_server: DnsServer) -> None:
    dns_server.everything = NXDOMAIN
    before = balance(owner)
    response = logged_in(owner).post(reverse("verify"), {"email": "someone@gmail.com"})
    assert response.status_code == 200
    assert "dns_temporary_failure" in response.content.decode()
    assert balance(owner) == before


def test_a_batch_while_the_resolver_is_broken_charges_only_what_was_judged(
    owner: Persona, dns_server: DnsServer
) -> None:
    dns_server.everything = NXDOMAIN
    before = balance(owner)
    response = owner.post_json("/v1/verify/batch", {"emails": ["someone@gmail.com", "not an address"]})
    assert [(r["status"], r["sub_status"]) for r in response.json()["data"]] == [
        ("unknown", "dns_temporary_failure"),
        ("invalid", "invalid_syntax"),
    ]
    assert balance(owner) == before - 1  # the syntax verdict needs no resolver; the unknown one is free


@pytest.fixture
def own_resolver(settings: Any) -> Iterator[DnsServer]:
    """A resolver of this test's own (the canaries answer) whose silent check takes about 1.6 s (two
    lifetimes), more than a probe may wait; the background check it starts is nobody else's."""
    with DnsServer(zone={"gmail.com": MX("gmail-smtp-in.l.google.com")}) as server:
        settings.VERIFIER_DNS_NAMESERVERS = [server.address]
        settings.VERIFIER_DNS_TIMEOUT, settings.VERIFIER_DNS_LIFETIME = 0.4, 0.8
        yield server


def timed_readyz() -> tuple[float, str]:
    """How long /readyz took, and its dns check (the whole is 503 here anyway: no qcluster runs)."""
    started = time.monotonic()
    response = Client().get("/readyz")
    return time.monotonic() - started, response.json()["checks"]["dns"]


def test_readyz_answers_within_a_second_while_the_resolver_drops_everything(db: None, own_resolver: DnsServer) -> None:
    own_resolver.everything = SILENT
    answers = [timed_readyz()]
    while not answers[-1][1].startswith("broken") and len(answers) < 30:  # the check ends after ~1.6 s
        answers.append(timed_readyz())
    assert max(seconds for seconds, _ in answers) < 1.0
    assert answers[0][1] == "checking: the canary names have not answered yet"
    assert answers[-1][1] == (
        "broken: every canary name failed (gmail.com failure, outlook.com failure, yahoo.com failure)"
    )
    assert all(dns != "ok" for _, dns in answers)


def test_readyz_answers_from_the_last_finding_while_a_new_check_waits(db: None, own_resolver: DnsServer) -> None:
    assert timed_readyz()[1] == "ok"
    own_resolver.everything = SILENT
    with a_minute_later():  # the finding has expired: a new check begins, and gets no answer
        answers = [timed_readyz()]
        while answers[-1][1] == "ok" and len(answers) < 30:  # until the check ends, the last finding answers
            answers.append(timed_readyz())
    assert max(seconds for seconds, _ in answers) < 1.0
    assert [dns for _, dns in answers[:-1]] == ["ok"] * (len(answers) - 1) and len(answers) > 1
    assert answers[-1][1].startswith("broken")  # only once a whole check found it so


@committed_db
def test_threads_that_find_no_finding_at_once_share_one_check(dns_server: DnsServer, settings: Any) -> None:
    # A web worker's threads asking together wait for one check, not one each.
    dns_server.delay = 0.2  # the first check is still in flight when the others ask
    settings.VERIFIER_DNS_TIMEOUT = settings.VERIFIER_DNS_LIFETIME = 3.0  # no try times out, even on a busy machine
    asked = dns_server.queries
    findings = run_at_once(4, resolver_health)
    assert [health is not None and not health.broken for health in findings] == [True] * 4
    # One check asks the three canary names; four would ask twelve. (A query still in flight from an
    # earlier test's background probe may land meanwhile.)
    assert 3 <= dns_server.queries - asked < 6
