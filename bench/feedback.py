"""``python -m bench --only feedback``: the catch-all estimate and the feedback rules on a synthetic world.

A world of catch-all domains with known true delivery rates (most healthy, some mostly dead), and a
few plain domains; honest accounts that send to them over 240 days and report what happened with
noise (some events never reported, a few misreported); and a poisoning account that reports hard
bounces for its competitors' real addresses and floods fake deliveries for a dead domain. The first
180 days train; the last 60 are "later outcomes". It runs the engine's own functions
(verification/engine/deliverability.py), no database.

Reported, per seed (median, min and max over the seeds):
- the mean squared error of the estimate against the later outcomes (a Brier score, per outcome),
  against that of the global rate, on domains with at least MIN_LATER later outcomes;
- a reliability table: later outcomes by decile of the estimate, mean estimate vs delivered share;
- the share of later catch-all rows (an account asking about an address) the rules move to valid or
  invalid, and how often wrongly (valid: the mailbox does not exist; invalid: it does);
- the verdicts of other accounts the poisoner changed alone (must be 0), and with one honest report
  beside it; how far its flood moved a domain's estimate, and the largest move one account flooding any
  domain (or all at once) can make to another account's estimate (must be at most MAX_SHIFT).
"""

from __future__ import annotations

import os
import random
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from verification.engine.deliverability import (
    DELIVERED,
    HARD_BOUNCE,
    domain_counts,
    estimate,
    evidence_from,
    feedback_applied,
    global_counts,
    pooled_rate,
)
from verification.engine.verdict import Checks, Status, SubStatus, Verdict

SEEDS = (1, 2, 3)
DAYS, TRAIN_DAYS = 240, 180
CATCH_ALL_DOMAINS, PLAIN_DOMAINS = 300, 100
ADDRESSES_PER_DOMAIN = 60
HONEST_ACCOUNTS = 40
SENDS_PER_ACCOUNT = 600
LIST_SIZE = 300
REPORTED_SHARE = 0.8  # a sender's webhook misses some events
MISREPORTED_SHARE = 0.02  # and gets a few wrong
MIN_LATER = 5
DEFAULT_PRIOR = 0.7
START = datetime(2026, 1, 1, tzinfo=UTC)
POISONER = 999
MAX_SHIFT = 0.05  # how far one account alone may move another's estimate of a domain


@dataclass
class World:
    truth: dict[str, float]  # catch-all domain -> true share of its addresses that exist
    exists: dict[str, bool]  # address -> whether its mailbox exists
    events: list[tuple[str, int, str, datetime]] = field(default_factory=list)  # (email, account, outcome, when)
    asked: list[tuple[int, str, datetime]] = field(default_factory=list)  # later rows: (account, email, when)
    members: dict[int, frozenset[int]] = field(default_factory=dict)


def world(seed: int) -> World:
    rng = random.Random(seed)
    truth = {f"ca{n}.example": _true_rate(rng) for n in range(CATCH_ALL_DOMAINS)}
    domains = [*truth, *(f"plain{n}.example" for n in range(PLAIN_DOMAINS))]
    exists = {
        f"u{i}@{domain}": rng.random() < truth.get(domain, 0.97)
        for domain in domains
        for i in range(ADDRESSES_PER_DOMAIN)
    }
    made = World(
        truth, exists, members={a: frozenset({a}) for a in range(HONEST_ACCOUNTS)} | {POISONER: frozenset({POISONER})}
    )
    addresses = list(exists)
    for account in range(HONEST_ACCOUNTS):
        mailing_list = rng.sample(addresses, LIST_SIZE)  # each account mails its own list, again and again
        for _ in range(SENDS_PER_ACCOUNT):
            _send(made, rng, account, rng.choice(mailing_list))
    _poison(made, rng)
    return made


def _true_rate(rng: random.Random) -> float:
    """Most catch-all domains deliver well; some are mostly dead (a departed company, a tenant wound down)."""
    return rng.betavariate(18, 2) if rng.random() < 0.65 else rng.betavariate(2, 5)


def _send(made: World, rng: random.Random, account: int, email: str) -> None:
    when = START + timedelta(days=rng.uniform(0, DAYS))
    if when >= START + timedelta(days=TRAIN_DAYS) and email.split("@")[1] in made.truth:
        made.asked.append((account, email, when))  # verified before sending, in the later period
    if rng.random() > REPORTED_SHARE:
        return
    delivered = made.exists[email] != (rng.random() < MISREPORTED_SHARE)
    made.events.append((email, account, DELIVERED if delivered else HARD_BOUNCE, when))


def _poison(made: World, rng: random.Random) -> None:
    """A competitor's real addresses reported as hard bounces, and fake deliveries for a dead domain."""
    real = [email for email, there in made.exists.items() if there and email.split("@")[1] in made.truth]
    for email in rng.sample(real, 500):
        made.events.append((email, POISONER, HARD_BOUNCE, START + timedelta(days=rng.uniform(TRAIN_DAYS - 20, DAYS))))
    dead = min(made.truth, key=made.truth.__getitem__)
    for i in range(ADDRESSES_PER_DOMAIN):
        made.events.append((f"u{i}@{dead}", POISONER, DELIVERED, START + timedelta(days=TRAIN_DAYS - 1)))


def _domain_of(email: str) -> str:
    return email.split("@")[1]


Rows = dict[str, list[tuple[str, int, str, int]]]  # domain -> (domain, account, outcome, distinct addresses)


def domain_rows(events: list[tuple[str, int, str, datetime]], truth: dict[str, float]) -> Rows:
    """Each catch-all domain's reported outcomes, as verification/outcomes.py reads them from the store."""
    addresses: dict[tuple[str, int, str], set[str]] = defaultdict(set)
    for email, account, outcome, _ in events:
        if _domain_of(email) in truth:
            addresses[(_domain_of(email), account, outcome)].add(email)
    rows: Rows = defaultdict(list)
    for (domain, account, outcome), found in addresses.items():
        rows[domain].append((domain, account, outcome, len(found)))
    return rows


def global_rate(rows: Rows) -> float:
    return pooled_rate(global_counts(row for found in rows.values() for row in found), DEFAULT_PRIOR)


def seen_by(rows: Rows, domain: str, prior: float, asker: int | None = None) -> float:
    """The domain's estimate as `asker` sees it (None: an account that reported nothing there)."""
    counts = domain_counts(rows.get(domain, []), asker=asker)
    return estimate(*counts.get(domain, (0.0, 0.0)), prior).estimate


def estimates(events: list[tuple[str, int, str, datetime]], truth: dict[str, float]) -> tuple[dict[str, float], float]:
    """Each catch-all domain's estimate from the events, as an account that reported nothing there sees it."""
    rows = domain_rows(events, truth)
    prior = global_rate(rows)
    return {domain: seen_by(rows, domain, prior) for domain in truth}, prior


def calibration(made: World) -> dict[str, object]:
    cut = START + timedelta(days=TRAIN_DAYS)
    train = [e for e in made.events if e[3] < cut]
    later = [e for e in made.events if e[3] >= cut and e[1] != POISONER and _domain_of(e[0]) in made.truth]
    guess, prior = estimates(train, made.truth)
    rows = domain_rows(train, made.truth)
    per_domain: dict[str, int] = defaultdict(int)
    for email, *_ in later:
        per_domain[_domain_of(email)] += 1
    asked: dict[tuple[str, int], float] = {}  # (domain, account): the estimate that account sees, its own in full
    for email, account, *_ in later:
        key = (_domain_of(email), account)
        if key not in asked:
            asked[key] = seen_by(rows, key[0], prior, asker=account)
    scored = [
        (asked[(_domain_of(e[0]), e[1])], 1.0 if e[2] == DELIVERED else 0.0)
        for e in later
        if per_domain[_domain_of(e[0])] >= MIN_LATER
    ]
    return {
        "mse_estimate": statistics.fmean((p - y) ** 2 for p, y in scored),
        "mse_global": statistics.fmean((prior - y) ** 2 for _, y in scored),
        "mse_truth_estimate": statistics.fmean((guess[d] - t) ** 2 for d, t in made.truth.items()),
        "mse_truth_global": statistics.fmean((prior - t) ** 2 for t in made.truth.values()),
        "global_rate": prior,
        "outcomes_scored": len(scored),
        "reliability": _reliability(scored),
    }


def _reliability(scored: list[tuple[float, float]]) -> list[tuple[str, int, float, float]]:
    bins: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for p, y in scored:
        bins[min(9, int(p * 10))].append((p, y))
    return [
        (
            f"{b / 10:.1f}-{(b + 1) / 10:.1f}",
            len(rows),
            statistics.fmean(p for p, _ in rows),
            statistics.fmean(y for _, y in rows),
        )
        for b, rows in sorted(bins.items())
    ]


def moves(made: World, *, without_poisoner: bool = False) -> dict[tuple[int, str], Status]:
    """The status each later row gets from the rules, from events reported before it was asked."""
    events = [e for e in made.events if not (without_poisoner and e[1] == POISONER)]
    by_email: dict[str, list[tuple[str, int, str, datetime]]] = defaultdict(list)
    for event in events:
        by_email[event[0]].append(event)
    found: dict[tuple[int, str], Status] = {}
    for account, email, when in made.asked:
        rows = [(*e, True) for e in by_email[email] if e[3] < when]  # every reporter vouched for
        evidence = evidence_from(rows, account_id=account, now=when, members=lambda _: made.members, paid=set)
        found[(account, email)] = feedback_applied(_catch_all(email), evidence.get(email)).status
    return found


def _catch_all(email: str) -> Verdict:
    checks = Checks(True, True, True, None, False, False, True, False)
    return Verdict(
        email=email,
        is_valid=False,
        status=Status.RISKY,
        sub_status=SubStatus.CATCH_ALL,
        validation_mode="deep",
        confidence="medium",
        score=60,
        checks=checks,
    )


def rules(made: World) -> dict[str, object]:
    honest = moves(made, without_poisoner=True)
    poisoned = moves(made)
    rows = len(honest)
    to_valid = [key for key, status in honest.items() if status is Status.VALID]
    to_invalid = [key for key, status in honest.items() if status is Status.INVALID]
    changed = [key for key in poisoned if poisoned[key] != honest[key]]
    alone = [key for key in changed if not _other_bouncer(made, key)]
    return {
        "rows": rows,
        "moved_valid": len(to_valid) / rows,
        "moved_invalid": len(to_invalid) / rows,
        "wrong_valid": sum(not made.exists[email] for _, email in to_valid) / max(1, len(to_valid)),
        "wrong_invalid": sum(made.exists[email] for _, email in to_invalid) / max(1, len(to_invalid)),
        "poisoner_changed_alone": len(alone),
        "poisoner_changed_with_one_honest_report": len(changed) - len(alone),
        "flood_shift": _flood_shift(made),
        "poison_max_shift": _poison_max_shift(made),
        "worst_flood_shift": _worst_flood_shift(made),
    }


def _other_bouncer(made: World, key: tuple[int, str]) -> bool:
    """Whether an honest account besides the asker reported a hard bounce of the address."""
    account, email = key
    return any(e[0] == email and e[2] == HARD_BOUNCE and e[1] not in (account, POISONER) for e in made.events)


def _flood_shift(made: World) -> float:
    """How far the poisoner's fake deliveries moved the dead domain's estimate, as another account sees it."""
    dead = min(made.truth, key=made.truth.__getitem__)
    with_flood, _ = estimates(made.events, made.truth)
    without, _ = estimates([e for e in made.events if e[1] != POISONER], made.truth)
    return with_flood[dead] - without[dead]


def _poison_max_shift(made: World) -> float:
    """The largest move, either way, of any catch-all domain's estimate that the poisoner's events (its
    fake bounces across domains, its flood on the dead one) made, as another account sees it."""
    with_poison, _ = estimates(made.events, made.truth)
    without, _ = estimates([e for e in made.events if e[1] != POISONER], made.truth)
    return max(abs(with_poison[domain] - without[domain]) for domain in made.truth)


def _worst_flood_shift(made: World) -> float:
    """The largest move one account could make on any domain's estimate, as another account sees it: a
    flood of fake deliveries, or of fake hard bounces, of every address of one domain; and the same on
    every catch-all domain at once (which moves the global rate too)."""
    rows = domain_rows([e for e in made.events if e[1] != POISONER], made.truth)
    prior = global_rate(rows)
    before = {domain: seen_by(rows, domain, prior) for domain in made.truth}
    worst = 0.0
    for outcome in (DELIVERED, HARD_BOUNCE):
        flooded = {
            domain: [*rows.get(domain, []), (domain, POISONER, outcome, ADDRESSES_PER_DOMAIN)] for domain in made.truth
        }
        everywhere = global_rate(flooded)
        for domain in made.truth:
            one = seen_by({domain: flooded[domain]}, domain, prior)
            worst = max(worst, abs(one - before[domain]), abs(seen_by(flooded, domain, everywhere) - before[domain]))
    return worst


def run() -> list[dict[str, object]]:
    return [{"seed": seed} | calibration(made) | rules(made) for seed in SEEDS for made in [world(seed)]]


def report(results: list[dict[str, object]]) -> str:
    def spread(name: str, scale: float = 1.0, fmt: str = ".4f") -> str:
        values = [float(r[name]) * scale for r in results]  # type: ignore[arg-type]
        return f"{statistics.median(values):{fmt}} (min {min(values):{fmt}}, max {max(values):{fmt}})"

    lines = [
        f"Synthetic world: {CATCH_ALL_DOMAINS} catch-all + {PLAIN_DOMAINS} plain domains, {HONEST_ACCOUNTS} honest "
        f"accounts x {SENDS_PER_ACCOUNT} sends over {DAYS} days (train {TRAIN_DAYS}), seeds {SEEDS}; "
        "median (min, max).",
        f"MSE vs later outcomes, estimate:    {spread('mse_estimate')}",
        f"MSE vs later outcomes, global rate: {spread('mse_global')}",
        f"MSE vs true domain rate, estimate:  {spread('mse_truth_estimate')}",
        f"MSE vs true domain rate, global:    {spread('mse_truth_global')}",
        f"later catch-all rows moved to valid:   {spread('moved_valid', 100, '.1f')} %, "
        f"wrongly {spread('wrong_valid', 100, '.2f')} %",
        f"later catch-all rows moved to invalid: {spread('moved_invalid', 100, '.1f')} %, "
        f"wrongly {spread('wrong_invalid', 100, '.2f')} %",
        f"other accounts' verdicts the poisoner changed alone: {spread('poisoner_changed_alone', 1, '.0f')}",
        "... with one honest (misreported) bounce beside it:   "
        + spread("poisoner_changed_with_one_honest_report", 1, ".0f"),
        f"flood of fake deliveries: dead domain's estimate moved by {spread('flood_shift', 1, '+.3f')}",
        f"largest move of any domain's estimate by the poisoner's events: {spread('poison_max_shift', 1, '.3f')}",
        f"worst case, one account flooding any one domain either way: {spread('worst_flood_shift', 1, '.3f')}",
        "",
        f"Reliability (seed {results[0]['seed']}): estimate decile | later outcomes | mean estimate | delivered share",
    ]
    for decile, n, mean, observed in results[0]["reliability"]:  # type: ignore[union-attr]
        lines.append(f"  {decile} | {n:6d} | {mean:.3f} | {observed:.3f}")
    return "\n".join(lines)


def checks(results: list[dict[str, object]]) -> list[str]:
    """The issue's bars: a smaller MSE than the global rate's, and no account alone changing another's verdict."""
    failed = []
    if not all(float(r["mse_estimate"]) < float(r["mse_global"]) for r in results):  # type: ignore[arg-type]
        failed.append("the estimate's MSE is not below the global rate's on every seed")
    if any(int(r["poisoner_changed_alone"]) for r in results):  # type: ignore[call-overload]
        failed.append("the poisoning account alone changed another account's verdict")
    if any(float(r["worst_flood_shift"]) > MAX_SHIFT for r in results):  # type: ignore[arg-type]
        failed.append(f"one account alone moved a domain's estimate by more than {MAX_SHIFT}")
    return failed


def main() -> int:
    results = run()
    print(report(results))
    print(f"1-minute load average: {os.getloadavg()[0]:.2f}")
    failed = checks(results)
    for failure in failed:
        print(f"MISSED: {failure}")
    print(
        "met: MSE below the global rate's on every seed; no account alone changed another's verdict "
        f"or moved a domain's estimate by more than {MAX_SHIFT}"
        if not failed
        else ""
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
