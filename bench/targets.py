"""The targets a run is judged against: each met or missed, with its two figures, and their summary
over several rounds (the median, with min and max). The printed table and the JSON file are
report.py's."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass

from bench.deep import DEEP_JOB, DEEP_LARGE, DEEP_LARGER, DEEP_MACHINES, DEEP_PEER, FAST_BESIDE
from bench.fairness import FAIRNESS_BIG, FAIRNESS_SMALL, ISOLATION_BUSY, ISOLATION_IDLE
from bench.outside import OUTSIDE_BULK, OUTSIDE_DEEP, OUTSIDE_DEEP_LARGE, OUTSIDE_FAIR, OUTSIDE_PEER
from bench.probe import CRASH, LOAD, MONEY
from bench.results import Measurement
from bench.single import DOMAIN_CACHED, FLOOR


@dataclass(frozen=True)
class Target:
    name: str
    measured: str  # the figure checked, as text
    limit: str  # what it is checked against, as text
    met: bool | None  # None: not measured this run
    value: float | None = None  # the figure the check compares (a ratio, seconds, MB)
    at_least: float | None = None  # met when value >= at_least ...
    at_most: float | None = None  # ... or value <= at_most
    checks_ok: bool = True  # the conditions besides the value (no errors, sessions, peak per address)
    detail: str = ""  # what the summary of several rounds repeats per round (sessions, peak per address)


def _judge(value: float, at_least: float | None, at_most: float | None) -> bool:
    return (at_least is None or value >= at_least) and (at_most is None or value <= at_most)


def summarise(rounds: list[list[Target]]) -> list[Target]:
    """Each target over the rounds: judged on the median of its values, reported with min and max."""
    summary = []
    for position, first in enumerate(rounds[0]):
        values = [r[position].value for r in rounds if r[position].value is not None and r[position].met is not None]
        if not values or len(rounds) == 1:
            summary.append(first)
            continue
        median = statistics.median(values)
        spread = f"median {median:.2f} (min {min(values):.2f}, max {max(values):.2f}, {len(values)} runs)"
        details = [r[position].detail for r in rounds if r[position].detail]
        if details:
            spread += "; by round: " + " / ".join(details)
        checks_ok = all(r[position].checks_ok for r in rounds if r[position].met is not None)
        summary.append(
            Target(first.name, spread, first.limit, _judge(median, first.at_least, first.at_most) and checks_ok,
                   median, first.at_least, first.at_most, checks_ok)
        )  # fmt: skip
    return summary


def _find(
    results: list[Measurement], scenario: str, test: Callable[[Measurement], bool] = lambda m: True
) -> Measurement | None:
    return next((m for m in results if m.scenario == scenario and test(m)), None)


def _backend(name: str) -> Callable[[Measurement], bool]:
    return lambda m: m.extra.get("backend") == name


def targets(results: list[Measurement]) -> list[Target]:
    out: list[Target] = []
    engine, peer = _find(results, "engine"), _find(results, "peer")
    for backend, label in (("sqlite", "SQLite"), ("postgres", "PostgreSQL")):
        bulk = _find(results, "bulk", _backend(backend))
        out.append(_ratio(f"bulk ({label}) ≥ 50% of engine throughput", bulk, engine, 0.5, "rows/s"))
        out.append(_ratio(f"bulk ({label}) ≥ 10× peer throughput", bulk, peer, 10.0, "rows/s"))
        out.append(_worker_memory(label, bulk))
        out.append(_storage(label, bulk))
    upload = _find(results, "upload")
    out.append(
        Target(
            "upload of a 25 MB file ≤ 3 s",
            f"{upload.seconds:.2f} s" if upload else "-",
            "3 s",
            (upload.seconds <= 3.0 and not upload.errors) if upload else None,
            upload.seconds if upload else None,
            at_most=3.0,
        )
    )
    out.extend(_wide(_find(results, "bulk", _backend("sqlite")), _find(results, "bulk-wide")))
    for backend, label in (("sqlite", "SQLite"), ("postgres", "PostgreSQL + Redis")):
        out.extend(_single(results, backend, label))
    out.append(_scaling(results))
    out.extend(_many_customers(results))
    out.extend(_weather(results))
    out.extend(_deep(results))
    out.extend(_outside(results))
    out.extend(_probe(results))
    return out


def _probe(results: list[Measurement]) -> list[Target]:
    """Issue 22's probe, run again: each check holds or not (its problems are the measurement's errors)."""
    names = {
        MONEY: "probe: 50 parallel verifies on 10 credits → 10 charged, 40 refused 402, ledger balanced",
        CRASH: "probe: kill -9 of the qcluster mid a 50,000-row job → it completes, each row charged once",
        LOAD: "probe: 40 clients for 60 s → 0 errors",
    }
    out = []
    for case, name in names.items():
        found = _find(results, "probe", lambda m, case=case: m.case == case)
        if found is None:
            out.append(Target(name, "-", "-", None))
            continue
        shown = (
            f"{found.count:,} requests, p50 {found.p50_ms:.0f} ms, p99 {found.p99_ms:.0f} ms"
            if found.p99_ms
            else (f"{found.seconds:.1f} s")
        )
        shown += f"; {len(found.errors)} problem(s)" + (f": {found.errors[0][:200]}" if found.errors else "")
        out.append(Target(name, shown, "no problem", not found.errors, len(found.errors), at_most=0))
    return out


def _deep(results: list[Measurement]) -> list[Target]:
    """Issue 34's targets: the 2,000-row job ≤ 1.5 s with ≤ 300 sessions and ≤ 3 at once an address,
    the same on two machines behind one egress, a fast job beside it ≤ 1 s; 20,000 and 40,000 rows reported."""
    beside = _find(results, "deep", lambda m: m.case == FAST_BESIDE)
    out = [
        _deep_job(
            _find(results, "deep", lambda m: m.case == DEEP_JOB),
            "deep: 2,000 rows, 100 MX addresses, 50 ms replies",
            1.5,
        ),
        _deep_job(
            _find(results, "deep", lambda m: m.case == DEEP_MACHINES),
            "deep: the same on two machines behind one egress",
            None,
        ),
        _deep_job(
            _find(results, "deep", lambda m: m.case == DEEP_LARGE), "deep: 20,000 rows, 4,000 domains (reported)", None
        ),
        _deep_job(
            _find(results, "deep", lambda m: m.case == DEEP_LARGER),
            "deep: 40,000 rows, 8,000 domains, two batches (reported)",
            None,
        ),
    ]
    name = "deep: another account's 50-row fast job during it ≤ 1 s"
    if beside:
        out.append(Target(name, f"{beside.seconds:.2f} s", "1 s", beside.seconds <= 1, beside.seconds, at_most=1))
    else:
        out.append(Target(name, "-", "-", None))
    out.append(
        _deep_peer(
            _find(results, "deep", lambda m: m.case == DEEP_JOB), _find(results, "deep", lambda m: m.case == DEEP_PEER)
        )
    )
    return out


def _outside(results: list[Measurement]) -> list[Target]:
    """From outside on a fresh default stack (bench/outside.py): each within its seconds, ≤ 3 at once an address;
    the bulk job ≥ 50× email-validator measured in the same round."""
    out = []
    for case, name, limit in (
        (OUTSIDE_DEEP, "outside: deep 2,000 rows, fresh default stack", 1.5),
        (OUTSIDE_DEEP_LARGE, "outside: deep 20,000 rows, fresh default stack", 5.0),
        (OUTSIDE_FAIR, "outside: a 50-row job behind five 100k jobs, upload → callback", 1.0),
    ):
        found = _find(results, "outside", lambda m, case=case: m.case == case)
        if found is None:
            out.append(Target(f"{name} ≤ {limit} s", "-", "-", None))
            continue
        detail = f"peak {found.extra['peak_per_address']}" if "peak_per_address" in found.extra else ""
        ok = not found.errors
        shown = f"{found.seconds:.2f} s {detail}".strip()
        met = ok and found.seconds <= limit
        out.append(Target(f"{name} ≤ {limit} s", shown, f"{limit} s", met, found.seconds, None, limit, ok, detail))
    bulk, peer = (_find(results, "outside", lambda m, c=c: m.case == c) for c in (OUTSIDE_BULK, OUTSIDE_PEER))
    name = "outside: the bulk fast job, fresh default stack ≥ 50× email-validator"
    out.append(_ratio(name, bulk, peer, 50.0, "rows/s"))
    return out


def _deep_peer(ours: Measurement | None, peer: Measurement | None) -> Target:
    """Reported: pigeontrust within 3 connections an address on the same rows, its time over ours."""
    name = "deep: pigeontrust (100 domains at once) on the same 2,000 rows, its time ÷ ours (reported)"
    if ours is None or peer is None or not ours.seconds:
        return Target(name, "-", "-", None)
    ratio = peer.seconds / ours.seconds
    detail = f"{peer.seconds:.2f} s, {peer.extra.get('sessions')} sessions, peak {peer.extra.get('peak_per_address')}"
    shown = f"{detail} vs ours {ours.seconds:.2f} s: ×{ratio:.2f}"
    return Target(name, shown, "reported", not peer.errors, ratio, checks_ok=not peer.errors, detail=detail)


def _deep_job(job: Measurement | None, name: str, seconds: float | None) -> Target:
    """≤ `seconds` (None: only reported), ≤ 300 sessions for 2,000 rows, never > 3 at once an address."""
    limit = f"≤ {seconds} s, " if seconds else ""
    name = f"{name}: {limit}≤ 3 at once an address" + (", ≤ 300 sessions" if seconds else "")
    if job is None:
        return Target(name, "-", "-", None)
    sessions = int(job.extra.get("sessions", 0))
    detail = f"{sessions} sessions, peak {job.extra.get('peak_per_address')}"
    shown = f"{job.seconds:.2f} s, {detail}"
    checks_ok = not job.errors and (seconds is None or sessions <= 300)
    met = checks_ok and (seconds is None or job.seconds <= seconds)
    return Target(
        name, shown, limit or "3 at once", met, job.seconds, at_most=seconds, checks_ok=checks_ok, detail=detail
    )


def _weather(results: list[Measurement]) -> list[Target]:
    """README, DNS: with 2% loss or a 1,000/s cap, at most 0.1% of rows on good domains unknown."""
    out = []
    for case in ("2% packet loss", "1,000 answers/s cap"):
        found = _find(results, "weather", lambda m, case=case: m.case == case)
        name = f"weather: {case} → ≤ 0.1% unknown"
        if found is None:
            out.append(Target(name, "-", "-", None))
            continue
        share = 100 * found.extra["unknown_share"]
        shown = f"{share:.3f}% unknown in {found.seconds:.1f} s"
        out.append(Target(name, shown, "0.1%", share <= 0.1, share, at_most=0.1))
    return out


# The five big jobs' aggregate throughput before fair share, measured side by side on this
# machine (issue 11): the scheme may cost them at most 10% of it.
FIFO_AGGREGATE_ROWS_PER_SECOND = 42_000


def _many_customers(results: list[Measurement]) -> list[Target]:
    small = _find(results, "fairness", lambda m: m.case == FAIRNESS_SMALL)
    big = _find(results, "fairness", lambda m: m.case == FAIRNESS_BIG)
    idle = _find(results, "isolation", lambda m: m.case == ISOLATION_IDLE)
    busy = _find(results, "isolation", lambda m: m.case == ISOLATION_BUSY)
    names = (
        "fairness: a 50-row job behind five 100k jobs done ≤ 2 s",
        "fairness: the five big jobs keep ≥ 90% of 42,000 rows/s (before fair share)",
        "isolation: verify p99 during a bulk job ≤ 2× idle p99",
    )
    out = [Target(name, "-", "-", None) for name in names]
    if small:
        out[0] = Target(names[0], f"{small.seconds:.2f} s", "2 s", small.seconds <= 2, small.seconds, at_most=2)
    if big:
        ratio = big.rate / FIFO_AGGREGATE_ROWS_PER_SECOND
        out[1] = Target(names[1], f"{big.rate:,.0f} rows/s", f"0.9 × 42,000 (ratio {ratio:.2f})", ratio >= 0.9,
                        ratio, at_least=0.9)  # fmt: skip
    if idle and busy and idle.p99_ms and busy.p99_ms:
        ratio = busy.p99_ms / idle.p99_ms
        out[2] = Target(names[2], f"p99 {busy.p99_ms:.1f} ms", f"2 × idle {idle.p99_ms:.1f} ms (ratio {ratio:.2f})",
                        ratio <= 2 and not busy.errors, ratio, at_most=2)  # fmt: skip
    return out


def _single(results: list[Measurement], backend: str, label: str) -> list[Target]:
    on = _backend(backend)
    floor = _find(results, "single", lambda m: m.case == FLOOR and on(m))
    verify = _find(results, "single", lambda m: m.case == DOMAIN_CACHED and on(m))
    ratio = _ratio(
        f"single ({label}): verify (one key, domain cached) ≥ 50% of floor req/s", verify, floor, 0.5, "req/s"
    )
    name = f"single ({label}): verify p99 ≤ 5× p50"
    if not (verify and verify.p50_ms and verify.p99_ms):
        return [ratio, Target(name, "-", "-", None)]
    spread = verify.p99_ms / verify.p50_ms
    limit = f"5 × p50 {verify.p50_ms:.1f} ms = {5 * verify.p50_ms:.1f} ms"
    return [ratio, Target(name, f"p99 {verify.p99_ms:.1f} ms", limit, spread <= 5, spread, at_most=5.0)]


def _ratio(name: str, a: Measurement | None, b: Measurement | None, factor: float, unit: str) -> Target:
    if a is None or b is None:
        return Target(name, "-", "-", None)
    ratio = a.rate / b.rate
    return Target(
        name,
        f"{a.rate:,.0f} {unit}",
        f"{factor:g} × {b.rate:,.0f} = {factor * b.rate:,.0f} {unit} (ratio {ratio:.2f})",
        ratio >= factor and not a.errors,
        ratio,
        at_least=factor,
    )


def _wide(narrow: Measurement | None, wide: Measurement | None) -> list[Target]:
    """Issue 10: a 6-column 25 MB list (original rows kept) costs at most 1.2x the one-column job's time."""
    names = ("bulk 6 columns, 25 MB (SQLite) ≤ 1.2× the one-column job's time", "web peak memory during it < 150 MB")
    if narrow is None or wide is None:
        return [Target(name, "-", "-", None) for name in names]
    ratio, web = wide.seconds / narrow.seconds, wide.memory_mib.get("web largest", 0.0)
    return [
        Target(names[0], f"{wide.seconds:.2f} s", f"1.2 × {narrow.seconds:.2f} s (ratio {ratio:.2f})",
               ratio <= 1.2 and not wide.errors, ratio, at_most=1.2),
        Target(names[1], f"{web:.0f} MiB", "150 MB", web * 1.048576 < 150, web * 1.048576, at_most=150),
    ]  # fmt: skip


def _worker_memory(label: str, bulk: Measurement | None) -> Target:
    name = f"bulk ({label}) 100,000 rows: worker peak memory ≤ 300 MB"
    if bulk is None:
        return Target(name, "-", "-", None)
    peak = bulk.memory_mib.get("worker largest", 0.0)
    at = f" (run at {bulk.count:,} rows)" if bulk.count != 100_000 else ""
    return Target(name, f"{peak:.0f} MiB{at}", "300 MB", peak * 1.048576 <= 300 if not at else None, peak * 1.048576,
                  at_most=300)  # fmt: skip


def _storage(label: str, bulk: Measurement | None) -> Target:
    name = f"bulk ({label}): after the job only its result files are stored"
    if bulk is None or "leftover_files" not in bulk.extra:
        return Target(name, "-", "-", None)
    left, stored = bulk.extra["leftover_files"], bulk.extra["stored_mb"]
    shown = f"{stored:.1f} MB in {len(bulk.extra['stored_files'])} files, {left} input/part files left"
    return Target(name, shown, "0 left", left == 0, left, at_most=0)


def _scaling(results: list[Measurement]) -> Target:
    name = "scaling: cost per row at the largest size within 20% of the smallest"
    runs = sorted((m for m in results if m.scenario == "scaling"), key=lambda m: m.count)
    if len(runs) < 2:
        return Target(name, "-", "-", None)
    small, large = runs[0], runs[-1]
    a, b = large.extra["seconds_per_1k_rows"], small.extra["seconds_per_1k_rows"]
    return Target(
        name,
        f"{a:.3f} s/1k rows at {large.count:,}",
        f"1.2 × {b:.3f} s/1k rows at {small.count:,} = {1.2 * b:.3f} (ratio {a / b:.2f})",
        a <= 1.2 * b,
        a / b,
        at_most=1.2,
    )
