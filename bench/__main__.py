"""``python -m bench``: run the scenarios, print the table and the target checks, write JSON."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from bench import (
    address_key_cost,
    bulk,
    calibration,
    deep,
    deep_unknown,
    engine,
    export_cost,
    fairness,
    feedback,
    feedback_cost,
    outside,
    peer,
    probe,
    report,
    scaling,
    single,
    targets,
    weather,
)
from bench.data import Dataset, default_domains, generate
from bench.dnsd import DnsProcess, start_dns
from bench.procs import ROOT, Processes, interruptible
from bench.results import Measurement

SCENARIOS = ("engine", "bulk", "single", "peer", "scaling", "fairness", "isolation", "weather", "deep", "outside")
# Run only when named in --only: checks of correctness under load, not measurements (bench/probe.py).
ON_REQUEST = (
    "probe", "feedback", "calibration", "feedback-cost", "deep-unknown", "export", "address-keys",
    "outside-deep", "outside-fairness", "outside-bulk",
)  # fmt: skip


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--rows", type=int, help="rows in the generated list (default 100,000)")
    parser.add_argument("--domains", type=int, help="distinct company domains (default rows / 5)")
    parser.add_argument("--delay-ms", type=float, default=2.0, help="the DNS server's answer delay (default 2)")
    parser.add_argument(
        "--only", default=",".join(SCENARIOS), help=f"comma-separated subset of {','.join(SCENARIOS + ON_REQUEST)}"
    )
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run of a couple of minutes")
    parser.add_argument("--requests", type=int, help="requests per single sub-scenario (default 4000; quick 400)")
    parser.add_argument("--peer-rows", type=int, help="cap the rows the peer scenario runs (default: all)")
    parser.add_argument("--repeat", type=int, help="rounds of every scenario; targets report the median (default 3)")
    parser.add_argument("--json", type=Path, default=ROOT / "var" / "bench" / "latest.json", help="JSON output")
    args = parser.parse_args(argv)
    if args.quick:
        args.rows = args.rows or 5000
        args.requests = args.requests or 400
        args.repeat = args.repeat or 1
    args.repeat = args.repeat or 3
    args.rows = args.rows or 100_000
    args.requests = args.requests or 4000
    args.domains = args.domains or default_domains(args.rows)
    args.only = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = set(args.only) - set(SCENARIOS) - set(ON_REQUEST)
    if unknown:
        parser.error(f"unknown scenario(s): {', '.join(sorted(unknown))}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.only == ["feedback"]:  # a calibration report on a synthetic world: no stack, no load (bench/feedback.py)
        return feedback.main()
    if args.only == ["calibration"]:  # score / 100 against later outcomes per provider family (bench/calibration.py)
        return calibration.main()
    if args.only == ["feedback-cost"]:  # the feedback lookup's cost on the verify path (bench/feedback_cost.py)
        return feedback_cost.main()
    if args.only == ["export"]:  # an account export's time and memory (bench/export_cost.py)
        return export_cost.main()
    if args.only == ["address-keys"]:  # the HMAC keying's cost, keyed against unkeyed (bench/address_key_cost.py)
        return address_key_cost.main(args)
    signal.signal(signal.SIGTERM, _terminate)  # stop everything as on Ctrl-C
    interruptible()
    results: list[Measurement] = []
    failures: list[str] = []
    started = time.monotonic()
    data = generate(args.rows, args.domains)
    _say(
        f"{len(data.rows):,} rows ({data.unique:,} unique) over {args.domains:,} company domains; "
        f"DNS delay {args.delay_ms} ms"
    )
    load_before = os.getloadavg()
    rounds: list[list[Measurement]] = []
    with Processes(dict(os.environ)) as processes:
        dns = start_dns(processes, args.delay_ms, warm=data)
        args.processes = processes  # the weather scenario starts DNS servers of its own
        for number in range(1, args.repeat + 1):
            rounds.append(_round(number, args, data, dns, failures))
            results.extend(rounds[-1])
    load_after = os.getloadavg()
    found = targets.summarise([targets.targets(measured) for measured in rounds])
    print()
    print(report.table(results))
    print()
    print(report.details(results))
    print()
    print(f"Load average (1, 5, 15 min): before {_load(load_before)}, after {_load(load_after)}")
    print(f"Targets ({args.repeat} round(s); each judged on the median of its rounds' ratios):")
    print(report.checks(found))
    for failure in failures:
        print(f"!!! ABORTED {failure}")
    options = {k: v for k, v in vars(args).items() if k not in ("json", "processes")} | {
        "load_before": load_before,
        "load_after": load_after,
    }
    report.write_json(args.json, options, results, found, failures)
    print(f"\nJSON: {args.json}  ({time.monotonic() - started:.0f} s in all)")
    return 1 if failures else 0


def _round(
    number: int, args: argparse.Namespace, data: Dataset, dns: DnsProcess, failures: list[str]
) -> list[Measurement]:
    measured: list[Measurement] = []
    for name in args.only:
        run = _runner(name, args, data, dns, measured)
        _say(f"== round {number}: {name}")
        try:
            for measurement in run():
                measurement.extra["round"] = number
                measured.append(measurement)
        except Exception as exc:  # one scenario failing must not lose the others
            traceback.print_exc()
            failures.append(f"round {number}, {name}: {exc}")
            _say(f"!!! scenario {name} aborted: {exc}")
    return measured


def _load(load: tuple[float, float, float]) -> str:
    return ", ".join(f"{value:.2f}" for value in load)


def _runner(
    name: str, args: argparse.Namespace, data: Dataset, dns: DnsProcess, results: list[Measurement]
) -> Callable[[], list[Measurement]]:
    if name == "engine":
        return lambda: [engine.run(data, dns.address)]
    if name == "peer":
        return lambda: [peer.run(data, dns.host, dns.port, args.peer_rows)]
    if name == "bulk":
        return lambda: [
            *bulk.run(data, dns.address, bulk.SQLITE, with_big_upload=True),
            *bulk.run(data, dns.address, bulk.SQLITE, scenario=bulk.WIDE, wide=True),
            *bulk.run(data, dns.address, bulk.POSTGRES),
        ]
    if name == "single":
        return lambda: [*single.run(dns.address, args.requests), *single.run(dns.address, args.requests, "postgres")]
    if name == "fairness":
        return lambda: fairness.run_fairness(dns.address, args.rows)
    if name == "weather":
        return lambda: weather.run(args.processes, args.delay_ms)
    if name == "deep":
        return deep.run
    if name.startswith("outside"):  # `outside` runs every part; `outside-deep`, `-fairness` or `-bulk` one
        parts = outside.PARTS if name == "outside" else (name.split("-", 1)[1],)
        return lambda: outside.run(dns, data, parts, args.peer_rows)
    if name == "deep-unknown":
        return deep_unknown.run
    if name == "probe":
        return lambda: probe.run(dns.address)
    if name == "isolation":
        return lambda: fairness.run_isolation(dns.address, args.rows, min(args.requests, 1000))
    sizes = (args.rows // 10, args.rows // 2, args.rows)
    reuse = {
        m.count: m
        for m in results
        if m.scenario == "bulk" and m.extra.get("backend") == "sqlite" and args.domains == default_domains(m.count)
    }
    return lambda: scaling.run(dns.address, sizes, reuse)


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _terminate(*_: object) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    sys.exit(main())
