"""``python -m bench --only calibration``: is `score / 100` a probability of delivery, per provider family?

A synthetic world (seeded; no network, no database): addresses at domains of the four provider families
of the bounce guarantee (google, microsoft, yahoo, other: MX host names the engine's provider table
knows), each with a hidden truth (does the mailbox exist, is the domain catch-all and of which kind, is a
role address a group that refuses outside senders, is a throwaway inbox still alive) from which its later
outcome (delivered or hard bounce) is drawn. The ENGINE's own functions judge each address, fast or deep
(half each): `classify` on a DomainAnswer built here, and for deep rows `deep_verdict` on the SMTP answers
the world's MX would give (Answer / Reply, as the engine's unit tests build them). Reported per family, for
each seed and as the median with min and max over SEEDS: the Brier score and the expected calibration error
(10 equal-width bins of score / 100) against the later outcome (delivered = 1), and a reliability table.

What the world assumes (every rate below is ours, chosen from public descriptions of how these providers
behave, NOT measured from outcomes; bench/README.md, "Calibration"):
- a list's mailboxes exist at a family's rate (FAMILIES: yahoo lowest, Yahoo closes inactive accounts);
  an existing mailbox delivers but for a 1 % of transient loss; a full one (1 %) delivers later 40 % of the
  time; a mailbox that does not exist always bounces;
- Yahoo answers 250 for a share of mailboxes that do not exist and bounces afterwards (accept-then-bounce);
  Microsoft 365 tenants with directory-based edge blocking off accept every recipient (they look catch-all);
- company domains are catch-all at a family's rate, either truly (every address delivers) or as a gateway
  that bounces unknown mailboxes afterwards;
- a role address at a company domain is often a group that refuses outside senders (Microsoft 365's
  default for distribution groups), which bounces after the RCPT was accepted;
- a throwaway domain's inbox is gone by the time a list is mailed, but for DISPOSABLE_ALIVE;
- a domain without MX never delivers.

What it can show: that the score table agrees with those assumptions, cell by cell and family by family,
and that the bench's arithmetic (Brier, ECE, deciles) is right. What it cannot show: that the assumptions
hold. Real calibration needs real outcomes: the guarantee's bounce rate of valid answers per family
(GET /v1/account's `guarantee`) is the figure to hold these rates against. Rows the engine answers
`unknown` (greylisted, blocked) are counted but not scored: their score (30) says "no answer", not a chance
of delivery, and they are never charged. A catch-all row's score moves with reported outcomes
(verification/engine/deliverability.py); here no outcomes are reported, so it is the table's.
"""

from __future__ import annotations

import random
import statistics
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass

from verification.engine.deep import deep_verdict
from verification.engine.dns import DomainAnswer, DomainStatus
from verification.engine.providers import PROVIDER_FAMILIES, mail_provider, provider_family
from verification.engine.smtp_answers import Answer
from verification.engine.smtp_replies import Meaning, Reply
from verification.engine.syntax import parse
from verification.engine.verdict import Status, SubStatus, Verdict, classify

SEEDS = (1, 2, 3)
ROWS_PER_FAMILY = 20_000
BINS = 10
MAX_ECE = 0.05
DISPOSABLE_ALIVE = 0.1
TRANSIENT_LOSS = 0.01
FULL_SHARE, FULL_DELIVERS = 0.01, 0.4


@dataclass(frozen=True)
class Family:
    free: tuple[tuple[str, str], ...]  # (free provider domain, its MX host)
    company_mx: str  # "{d}" is the company domain's label
    free_share: float  # of the family's rows at a free provider's domain
    exists: float  # share of a list's mailboxes that exist
    catch_all: float  # share of company domains that accept any recipient
    truly_catch_all: float  # of those, the share where every address delivers
    accepts_unknown: float  # share of unknown mailboxes answered 250 (then bounced)
    group_refuses: float  # share of role addresses at company domains refusing outside senders
    unsettled: float  # share of SMTP answers that are greylisting or a block


FAMILIES = {
    "google": Family(
        (("gmail.com", "gmail-smtp-in.l.google.com"),), "aspmx.l.google.com", 0.6, 0.93, 0.05, 1.0, 0.0, 0.3, 0.01
    ),
    "microsoft": Family(
        (
            ("outlook.com", "outlook-com.olc.protection.outlook.com"),
            ("hotmail.com", "hotmail-com.olc.protection.outlook.com"),
        ),
        "{d}-com.mail.protection.outlook.com",
        0.4,
        0.90,
        0.25,
        0.0,
        0.0,
        0.5,
        0.05,
    ),
    "yahoo": Family(
        (("yahoo.com", "mta5.am0.yahoodns.net"), ("aol.com", "mx-aol.mail.gm0.yahoodns.net")),
        "mx-biz.mail.am0.yahoodns.net",
        0.9,
        0.82,
        0.0,
        0.0,
        0.5,
        0.2,
        0.08,
    ),
    "other": Family((), "mx1.{d}.com", 0.0, 0.88, 0.2, 0.4, 0.0, 0.3, 0.04),
}
DOMAINS_PER_FAMILY = 400
ROLE_SHARE = 0.06
OTHER_DISPOSABLE, OTHER_NO_MX = 0.03, 0.03  # of the `other` rows (their MX names no family)
DISPOSABLE_DOMAIN, DISPOSABLE_MX = "mailinator.com", "mail.mailinator.com"
ROLES = ("info", "sales", "support", "office", "admin", "contact")
ACCEPTED = Answer(Reply(250, "2.1.5 Recipient OK"), Meaning.ACCEPTED)
NO_MAILBOX = Answer(Reply(550, "5.1.1 The email account that you tried to reach does not exist"), Meaning.NO_MAILBOX)
FULL = Answer(Reply(552, "5.2.2 Mailbox full"), Meaning.FULL)
GREYLISTED = Answer(Reply(451, "4.7.1 Greylisted, try again later"), Meaning.TRY_AGAIN)
BLOCKED = Answer(Reply(550, "5.7.1 Service unavailable, client host blocked"), Meaning.BLOCKED)


@dataclass(frozen=True)
class Row:
    family: str  # as the engine names it from the MX hosts
    mode: str
    verdict: Verdict
    delivered: bool


@dataclass(frozen=True)
class Domain:
    answer: DomainAnswer
    free: bool
    catch_all: str  # "", "true" (every address delivers) or "gateway" (unknown mailboxes bounce later)


def world(seed: int, rows_per_family: int = ROWS_PER_FAMILY) -> list[Row]:
    rng = random.Random(seed)
    rows: list[Row] = []
    for name, family in FAMILIES.items():
        companies = [_company(rng, name, family, n) for n in range(DOMAINS_PER_FAMILY)]
        for i in range(rows_per_family):
            rows.append(_row(rng, name, family, companies, i))
    return rows


def _company(rng: random.Random, name: str, family: Family, n: int) -> Domain:
    label = f"{name[:2]}co{n}"
    answer = DomainAnswer(f"{label}.com", DomainStatus.MX, 3600, (family.company_mx.format(d=label),))
    kind = ""
    if rng.random() < family.catch_all:
        kind = "true" if rng.random() < family.truly_catch_all else "gateway"
    return Domain(answer, False, kind)


def _row(rng: random.Random, name: str, family: Family, companies: list[Domain], i: int) -> Row:
    mode = "deep" if rng.random() < 0.5 else "fast"
    if name == "other" and rng.random() < OTHER_DISPOSABLE + OTHER_NO_MX:
        return _dead_end(rng, mode, i)
    if rng.random() < family.free_share:
        domain, mx = rng.choice(family.free)
        place = Domain(DomainAnswer(domain, DomainStatus.MX, 3600, (mx,)), True, "")
    else:
        place = rng.choice(companies)
    role = rng.random() < ROLE_SHARE
    local = rng.choice(ROLES) if role else f"person{i}"
    email = f"{local}@{place.answer.domain}"
    exists = rng.random() < family.exists
    refuses = role and not place.free and rng.random() < family.group_refuses
    full = exists and rng.random() < FULL_SHARE
    delivered = _delivered(rng, place, exists and not refuses, full)
    fast = classify(email, parse(email), place.answer)
    if mode == "fast" or fast.sub_status not in (None, SubStatus.ROLE_BASED):
        return Row(_family(place.answer), mode, fast, delivered)
    answer = _smtp_answer(rng, family, place, exists, full)
    probe = ACCEPTED if place.catch_all else NO_MAILBOX
    catch_all = bool(place.catch_all)
    return Row(_family(place.answer), mode, deep_verdict(fast, answer, probe, catch_all), delivered)


def _delivered(rng: random.Random, place: Domain, reachable: bool, full: bool) -> bool:
    if place.catch_all == "true":
        return rng.random() >= TRANSIENT_LOSS
    if full:
        return rng.random() < FULL_DELIVERS
    return reachable and rng.random() >= TRANSIENT_LOSS


def _smtp_answer(rng: random.Random, family: Family, place: Domain, exists: bool, full: bool) -> Answer:
    if rng.random() < family.unsettled:
        return GREYLISTED if rng.random() < 0.5 else BLOCKED
    if place.catch_all:
        return ACCEPTED
    if full:
        return FULL
    if exists or rng.random() < family.accepts_unknown:
        return ACCEPTED
    return NO_MAILBOX


def _dead_end(rng: random.Random, mode: str, i: int) -> Row:
    """A throwaway inbox or a domain without MX: the fast rules decide in either mode."""
    if rng.random() < OTHER_DISPOSABLE / (OTHER_DISPOSABLE + OTHER_NO_MX):
        answer = DomainAnswer(DISPOSABLE_DOMAIN, DomainStatus.MX, 3600, (DISPOSABLE_MX,))
        delivered = rng.random() < DISPOSABLE_ALIVE
    else:
        answer = DomainAnswer(f"nomx{i}.com", DomainStatus.NO_MX, 3600)
        delivered = False
    email = f"person{i}@{answer.domain}"
    return Row(_family(answer), mode, classify(email, parse(email), answer), delivered)


def _family(answer: DomainAnswer) -> str:
    return provider_family(mail_provider(answer.mx_hosts) if answer.mx_hosts else None)


def scored(rows: list[Row]) -> list[Row]:
    """The rows with an answer: `unknown` says nothing about delivery, and its score does not claim to."""
    return [row for row in rows if row.verdict.status is not Status.UNKNOWN]


def brier(pairs: list[tuple[float, float]]) -> float:
    return statistics.fmean((p - y) ** 2 for p, y in pairs)


def reliability(pairs: list[tuple[float, float]]) -> list[tuple[int, int, float, float]]:
    """(bin, rows, mean predicted, delivered share) for each non-empty tenth of [0, 1]."""
    bins: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for p, y in pairs:
        bins[min(BINS - 1, int(p * BINS))].append((p, y))
    return [
        (b, len(found), statistics.fmean(p for p, _ in found), statistics.fmean(y for _, y in found))
        for b, found in sorted(bins.items())
    ]


def ece(pairs: list[tuple[float, float]]) -> float:
    """Expected calibration error: the rows-weighted gap between predicted and observed, per bin."""
    return sum(n * abs(mean - observed) for _, n, mean, observed in reliability(pairs)) / len(pairs)


def pairs_of(rows: list[Row], family: str) -> list[tuple[float, float]]:
    return [(row.verdict.score / 100, 1.0 if row.delivered else 0.0) for row in rows if row.family == family]


def measure(seed: int, rows_per_family: int = ROWS_PER_FAMILY) -> dict[str, dict[str, object]]:
    rows = world(seed, rows_per_family)
    answered = scored(rows)
    result: dict[str, dict[str, object]] = {}
    for family in PROVIDER_FAMILIES:
        pairs = pairs_of(answered, family)
        result[family] = {
            "rows": sum(row.family == family for row in rows),
            "scored": len(pairs),
            "brier": brier(pairs),
            "ece": ece(pairs),
            "reliability": reliability(pairs),
            "cells": _cells([row for row in answered if row.family == family]),
        }
    return result


def _cells(rows: list[Row]) -> list[tuple[str, str, int, int, float]]:
    """(mode, sub_status, score, rows, delivered share) per verdict kind: where a gap comes from."""
    found: dict[tuple[str, str, int], list[bool]] = defaultdict(list)
    for row in rows:
        found[(row.mode, row.verdict.sub_status or "valid", row.verdict.score)].append(row.delivered)
    return [(m, s, score, len(d), sum(d) / len(d)) for (m, s, score), d in sorted(found.items())]


def run(seeds: tuple[int, ...] = SEEDS, rows_per_family: int = ROWS_PER_FAMILY) -> list[dict[str, dict[str, object]]]:
    return [measure(seed, rows_per_family) for seed in seeds]


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.4f} ({min(values):.4f}-{max(values):.4f})"


def report(results: list[dict[str, dict[str, object]]]) -> str:
    lines = [
        f"Synthetic world: {ROWS_PER_FAMILY:,} rows per family, half fast, half deep; seeds {SEEDS}; "
        "median (min-max) over seeds. Unknown rows counted, not scored.",
        "family    | rows   | scored | Brier                   | ECE",
    ]
    for family in PROVIDER_FAMILIES:
        got = [r[family] for r in results]
        lines.append(
            f"{family:9} | {int(got[0]['rows']):6d} | {int(got[0]['scored']):6d} | "  # type: ignore[call-overload]
            f"{_spread([float(g['brier']) for g in got])} | {_spread([float(g['ece']) for g in got])}"  # type: ignore[arg-type]
        )
    lines += ["", "Reliability (all seeds pooled): family | score decile | rows | mean score/100 | delivered share"]
    for family in PROVIDER_FAMILIES:
        pooled: Counter[int] = Counter()
        sums: dict[int, list[float]] = defaultdict(lambda: [0.0, 0.0])
        for r in results:
            for b, n, mean, observed in r[family]["reliability"]:  # type: ignore[attr-defined]
                pooled[b] += n
                sums[b][0] += n * mean
                sums[b][1] += n * observed
        for b in sorted(pooled):
            n = pooled[b]
            lines.append(
                f"  {family:9} | {b / 10:.1f}-{(b + 1) / 10:.1f} | {n:6d} | {sums[b][0] / n:.3f} | {sums[b][1] / n:.3f}"
            )
    lines += ["", f"Verdict kinds (seed {SEEDS[0]}): family | mode | sub_status | score | rows | delivered share"]
    for family in PROVIDER_FAMILIES:
        for mode, sub, score, n, share in results[0][family]["cells"]:  # type: ignore[attr-defined]
            lines.append(f"  {family:9} | {mode:4} | {sub:17} | {score:3d} | {n:5d} | {share:.3f}")
    return "\n".join(lines)


def checks(results: list[dict[str, dict[str, object]]]) -> list[str]:
    """The issue's bar: ECE at most MAX_ECE for every family, on the median of the seeds."""
    return [
        f"{family}: ECE {statistics.median(float(r[family]['ece']) for r in results):.4f} > {MAX_ECE}"  # type: ignore[arg-type]
        for family in PROVIDER_FAMILIES
        if statistics.median(float(r[family]["ece"]) for r in results) > MAX_ECE  # type: ignore[arg-type]
    ]


def main() -> int:
    results = run()
    print(report(results))
    failed = checks(results)
    for failure in failed:
        print(f"MISSED: {failure}")
    if not failed:
        print(f"met: ECE <= {MAX_ECE} for every provider family (median of {len(SEEDS)} seeds)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
