"""Deep mode safe to switch on: bounded work per verification whatever a domain's MX record set
names, international addresses (IDNA domains, SMTPUTF8 mailboxes), one bad row never failing
the others, and the fast rules' verdicts labelled deep."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import REGISTRY

from tests.conftest import Persona
from tests.support.deep import FORTY_BUSY
from tests.support.dns_server import HOST, MX, DnsServer
from tests.support.mx_farm import MxFarm
from tests.verification.conftest import deep, verdict_of
from verification.deep_requests import deep_request_slot
from verification.engine import Status, SubStatus
from verification.engine.core import verdicts_isolated
from verification.engine.smtp_scheduling import MAX_MX_ADDRESSES, MAX_MX_HOSTS, sessions_needed

pytestmark = pytest.mark.usefixtures("deep_farm")

BUSY = "127.0.0.16"


def cut(what: str) -> float:
    return REGISTRY.get_sample_value("verifier_smtp_work_cut_total", {"what": what}) or 0.0


def test_a_thousand_mx_hosts_on_one_address_cost_one_session_and_a_few_lookups(
    owner: Persona, deep_farm: MxFarm, _resolver_on_loopback: DnsServer
) -> None:
    dns = _resolver_on_loopback
    hosts = [f"mx{i}.thousand.deepfarm.net" for i in range(1000)]
    dns.set("thousand.deepfarm.net", MX(*hosts))
    for host in hosts:
        dns.set(host, HOST(BUSY))
    before, cut_before = dns.queries, cut("mx_hosts")
    body = deep(owner, "alice@thousand.deepfarm.net")
    assert verdict_of(body)[:2] == ("unknown", "greylisted")  # each answered "busy, try again later"
    assert deep_farm.stats.sessions[BUSY] == 1
    # The domain's MX (over UDP, truncated, then TCP), then A and AAAA of five hosts: never 2,002.
    assert dns.queries - before <= 2 + 2 * MAX_MX_HOSTS
    assert cut("mx_hosts") - cut_before == 1000 - MAX_MX_HOSTS


def test_forty_mx_hosts_on_forty_addresses_get_at_most_five_sessions(owner: Persona, deep_farm: MxFarm) -> None:
    body = deep(owner, "alice@forty.deepfarm.net")
    assert verdict_of(body)[:2] == ("unknown", "greylisted")  # each answered "busy, try again later"
    assert sum(deep_farm.stats.sessions[address] for address in FORTY_BUSY) == MAX_MX_ADDRESSES
    assert all(deep_farm.stats.peak[address] <= 1 for address in FORTY_BUSY)


def test_a_batch_of_one_hostile_domain_is_bounded_alike(owner: Persona, deep_farm: MxFarm) -> None:
    emails = [f"user{i}@forty.deepfarm.net" for i in range(30)]
    response = owner.post_json("/v1/verify/batch", {"emails": emails, "validation_mode": "deep"})
    assert response.status_code == 200
    shares = sessions_needed(len(emails) + 1, 3)  # and the catch-all probe: three shares, each bounded alike
    assert sum(deep_farm.stats.sessions[address] for address in FORTY_BUSY) <= MAX_MX_ADDRESSES * shares


def test_an_international_domain_is_asked_in_its_idna_form(owner: Persona, deep_farm: MxFarm) -> None:
    body = deep(owner, "alice@bücher.deepfarm.net")
    assert verdict_of(body) == ("valid", None, True, True, False)
    assert "alice@xn--bcher-kva.deepfarm.net" in deep_farm.stats.recipients


@pytest.mark.parametrize("email", ["jöe@utf8.deepfarm.net", "ñ@utf8.deepfarm.net"])
def test_a_non_ascii_mailbox_is_asked_with_smtputf8_where_the_server_offers_it(
    owner: Persona, deep_farm: MxFarm, email: str
) -> None:
    assert verdict_of(deep(owner, email)) == ("valid", None, True, True, False)
    assert email in deep_farm.stats.recipients


def test_a_non_ascii_mailbox_is_not_asked_of_a_server_without_smtputf8(owner: Persona, deep_farm: MxFarm) -> None:
    body = deep(owner, "jöe@ascii-only.deepfarm.net")
    assert (body["status"], body["sub_status"], body["is_valid"]) == ("unknown", "smtp_utf8_unsupported", False)
    assert body["checks"]["smtp_valid"] is None
    assert "jöe@ascii-only.deepfarm.net" not in deep_farm.stats.recipients
    assert all(recipient.isascii() for recipient in deep_farm.stats.recipients)


def test_a_batch_holding_international_addresses_answers_every_one(owner: Persona) -> None:
    emails = ["jöe@ascii-only.deepfarm.net", "alice@bücher.deepfarm.net", "alice@mailbox.deepfarm.net"]
    response = owner.post_json("/v1/verify/batch", {"emails": emails, "validation_mode": "deep"})
    assert response.status_code == 200
    statuses = [(row["status"], row["sub_status"]) for row in response.json()["data"]]
    assert statuses == [("unknown", "smtp_utf8_unsupported"), ("valid", None), ("valid", None)]


@pytest.mark.parametrize("email", ["not an address", "x@nullmx.com", "someone@mailinator.com"])
def test_a_deep_request_answered_by_the_fast_rules_says_deep(owner: Persona, email: str) -> None:
    assert deep(owner, email)["validation_mode"] == "deep"


def test_one_row_whose_judging_raises_is_unknown_and_the_others_are_judged() -> None:
    judged: list[list[str]] = []

    def judge(rows: list[str]) -> list[Any]:
        judged.append(rows)
        if "bad@x.com" in rows:
            raise UnicodeEncodeError("ascii", "bad", 0, 1, "a row the library cannot send")
        return [f"verdict of {row}" for row in rows]

    rows = ["a@x.com", "b@x.com", "bad@x.com", "c@x.com", "d@x.com"]
    verdicts = verdicts_isolated(rows, judge, mode="deep")
    assert verdicts[:2] == ["verdict of a@x.com", "verdict of b@x.com"]
    assert verdicts[3:] == ["verdict of c@x.com", "verdict of d@x.com"]
    failed = verdicts[2]
    assert (failed.status, failed.sub_status, failed.validation_mode) == (
        Status.UNKNOWN,
        SubStatus.VERIFICATION_FAILED,
        "deep",
    )
    assert failed.checks.syntax_valid is True and failed.email == "bad@x.com"


def test_an_outage_is_no_rows_fault_and_propagates() -> None:
    def judge(rows: list[str]) -> list[Any]:
        raise ConnectionRefusedError("the database is down")

    with pytest.raises(ConnectionRefusedError):
        verdicts_isolated(["a@x.com", "b@x.com"], judge, mode="fast", passthrough=(OSError,))


def test_an_accounts_deep_requests_beyond_its_cap_are_refused_at_once_and_cost_nothing(
    owner: Persona, outsider: Persona, settings: Any
) -> None:
    settings.VERIFIER_DEEP_REQUESTS_PER_ACCOUNT = 2
    with deep_request_slot(account_id=owner.account.pk), deep_request_slot(account_id=owner.account.pk):
        response = owner.post_json("/v1/verify", {"email": "alice@mailbox.deepfarm.net", "validation_mode": "deep"})
        assert response.status_code == 429
        assert response.json()["error"]["code"] == "too_many_deep_requests"
        assert int(response["Retry-After"]) > 0
        assert owner.verify("alice@mailbox.deepfarm.net").status_code == 200  # fast mode goes on
        assert deep(outsider, "alice@mailbox.deepfarm.net")["status"] == "valid"  # so do other accounts
    owner.account.refresh_from_db()
    assert owner.account.credit_balance == 999
    assert deep(owner, "alice@mailbox.deepfarm.net")["status"] == "valid"  # a slot freed is taken again
