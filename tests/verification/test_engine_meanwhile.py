"""While a chunk's lookup waits on DNS, the engine judges what it can: the rows whose domains were
cached, what the other rows' local parts and domain names say, and each row whose domain's MX answer
has come. The verdicts are the same as when nothing is done meanwhile; a negative answer is not
trusted before the lookup ends (the resolver may yet withhold it)."""

from __future__ import annotations

import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from functools import partial

import pytest

from tests.support.dns_server import A_ONLY, MX, NULL_MX, NXDOMAIN, SERVFAIL, DnsServer
from tests.support.domain_cache import DictCache
from verification.engine import BatchResolver, DomainAnswer, ResolverConfig, core, lookup_domains, verify_many
from verification.engine.dns import DomainStatus, LookupMeanwhile

ZONE = {
    "cached.com": MX("mx1.cached.com", "mx2.cached.com"),
    "fresh.com": MX("mx.fresh.com"),
    "other.com": MX("aspmx.l.google.com"),
    "gone.com": NXDOMAIN,
    "nomx.com": A_ONLY,
    "null.com": NULL_MX,
    "broken.com": SERVFAIL,
    "gmial.com": MX("mx.gmial.com"),
}
ROWS = [
    "jane@cached.com",
    "sales@cached.com",
    "joe@fresh.com",
    "info@fresh.com",
    "Ann@Other.com ",
    "x@gone.com",
    "y@nomx.com",
    "z@null.com",
    "w@broken.com",
    "kim@gmial.com",
    "no-at-sign",
    "two@@signs.com",
    "jane@cached.com",
]


def _lookup(server: DnsServer) -> partial[dict[str, DomainAnswer]]:
    """The engine's lookup against the server, with cached.com already in its cache."""
    resolver = BatchResolver(ResolverConfig(nameservers=(server.address,), timeout=1, lifetime=2))
    cache = DictCache()
    lookup = partial(lookup_domains, cache=cache, resolver=resolver)
    lookup(["cached.com"])
    return lookup


def _nothing_meanwhile(lookup: partial[dict[str, DomainAnswer]]) -> core.DomainLookup:
    def plain(domains: Collection[str], /, **_: object) -> Mapping[str, DomainAnswer]:
        return lookup(domains)

    return plain


def test_the_verdicts_are_those_of_a_lookup_that_does_nothing_meanwhile() -> None:
    with DnsServer(zone=ZONE, delay=0.02) as server:
        overlapped = verify_many(ROWS, _lookup(server))
        plain = verify_many(ROWS, _nothing_meanwhile(_lookup(server)))
    assert overlapped == plain
    assert [v.status for v in overlapped][:10] == [
        *("valid", "risky", "valid", "risky", "valid"),
        *("invalid", "invalid", "invalid", "unknown", "risky"),  # gmial.com is on the throwaway list
    ]
    assert overlapped[9].did_you_mean == "kim@gmail.com"


def test_a_cached_domains_rows_are_judged_while_the_others_are_awaited(monkeypatch: pytest.MonkeyPatch) -> None:
    judged_at: dict[str, float] = {}
    original = core.joined

    def recorded(email: str, *rest: object) -> object:
        judged_at.setdefault(email, time.monotonic())
        return original(email, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(core, "joined", recorded)
    with DnsServer(zone=ZONE, delay=0.3) as server:
        lookup = _lookup(server)
        returned: list[float] = []

        def timed(domains: Collection[str], /, *, meanwhile: LookupMeanwhile | None = None) -> dict[str, DomainAnswer]:
            answers = lookup(domains, meanwhile=meanwhile)
            returned.append(time.monotonic())
            return answers

        verdicts = verify_many(["jane@cached.com", "joe@fresh.com"], timed)
    assert [v.status for v in verdicts] == ["valid", "valid"]
    # Judged before the fresh domain's answer could have come (0.3 s after it was asked).
    assert returned[0] - judged_at["jane@cached.com"] > 0.2


def test_rows_are_judged_as_their_mx_answers_come_and_negative_answers_wait_for_the_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    joined: list[str] = []
    original = core.joined

    def recorded(email: str, *rest: object) -> object:
        joined.append(email)
        return original(email, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(core, "joined", recorded)
    mx = DomainAnswer("fresh.com", DomainStatus.MX, 300, ("mx.fresh.com",))
    gone = DomainAnswer("gone.com", DomainStatus.NXDOMAIN, 300)
    seen_when_gone_came: list[str] = []

    def arriving_one_by_one(domains: Collection[str], /, *, meanwhile: LookupMeanwhile | None = None) -> dict:
        assert meanwhile is not None
        arrived: list[DomainAnswer] = []
        work = meanwhile({}, arrived)
        steps = 0
        for answer in (mx, gone):
            while next(work):  # until it waits for more answers
                steps += 1
            arrived.append(answer)
        while next(work):
            steps += 1
        seen_when_gone_came.extend(joined)
        # The resolver withholds the negative answer it gave (found broken): the row is not invalid.
        return {"fresh.com": mx, "gone.com": DomainAnswer("gone.com", DomainStatus.FAILURE)}

    verdicts = verify_many(["joe@fresh.com", "info@fresh.com", "x@gone.com"], arriving_one_by_one)
    assert seen_when_gone_came == ["joe@fresh.com", "info@fresh.com"]
    assert [v.status for v in verdicts] == ["valid", "risky", "unknown"]
    assert verdicts[2].sub_status == "dns_temporary_failure"


def test_a_batch_with_nothing_to_do_meanwhile_waits_rather_than_spins() -> None:
    steps: list[int] = []

    def idle(arrived: Sequence[DomainAnswer]) -> Iterator[bool]:
        while True:
            steps.append(len(arrived))
            yield False

    with DnsServer(zone=ZONE, delay=0.2) as server:
        resolver = BatchResolver(ResolverConfig(nameservers=(server.address,), timeout=1, lifetime=2))
        answers = resolver.resolve(["fresh.com", "gone.com", "other.com"], meanwhile=idle)
    assert {domain: answer.status for domain, answer in answers.items()} == {
        "fresh.com": "mx",
        "gone.com": "nxdomain",
        "other.com": "mx",
    }
    assert 1 <= len(steps) <= 10  # asked each time the batch was about to wait, not in a loop for 0.2 s
