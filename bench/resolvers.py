"""Our stub resolver against c-ares (pycares) on the same lookups: CPU per query (issue 13).

    .venv/bin/python -m bench.resolvers [--domains 20000] [--rounds 3] [--delay-ms 2]
    .venv/bin/python -m bench.resolvers --bulk [--rows 100000] [--rounds 3]
    .venv/bin/python -m bench.resolvers --engine [--rows 100000] [--rounds 3]
    .venv/bin/python -m bench.resolvers --fairness [--rows 100000] [--rounds 3]


The bench's loopback DNS server in a process of its own (bench/dnsd.py); both resolvers behind
the engine's interface, the production settings (timeout 3 s, lifetime 9 s, 256 in flight),
one resolver per implementation across the run (as the worker keeps one), the domains in
batches of 2,000 (the worker's chunk). Rounds interleave the two (ours, c-ares, ours, ...),
each on domains of its own so nothing is answered from a cache. CPU is this process's
(time.process_time: every thread, c-ares's included); the DNS server's is not counted.

`--bulk`: instead, the `bulk` scenario's SQLite job (bench/bulk.py: a fresh stack, upload to
callback) with the service on each resolver in turn (the c-ares stacks run with
bench/cares_settings.py), interleaved the same way; wall seconds from upload to callback, and the
CPU seconds of the stack's qcluster processes. `--engine`: the `engine` scenario (bench/engine.py,
in-process, no database) on each resolver in turn. `--fairness`: the `fairness` scenario's five
big jobs at once on one qcluster (CPU-bound), their aggregate rows/s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable, Iterator
from functools import partial
from itertools import count

from bench import bulk, engine, fairness
from bench.cares_resolver import CaresResolver
from bench.data import Dataset, generate
from bench.dnsd import start_dns
from bench.procs import Processes, cpu_seconds, group_members
from bench.stack import Stack
from verification.engine.dns import BatchResolver, DomainStatus, ResolverConfig

BATCH = 2000
IMPLEMENTATIONS = {"ours": BatchResolver, "c-ares": CaresResolver}


def domains(round_: int, name: str, count: int) -> list[str]:
    """A mix like a bulk job's: mostly MX, 2 in 25 without MX, 2 in 25 NXDOMAIN."""
    tag = f"r{round_}{name.replace('-', '')}"
    shapes = ["co"] * 21 + ["nomx"] * 2 + ["nx"] * 2
    return [f"{shapes[i % 25]}{i}.{tag}.com" for i in range(count)]


def one_run(resolver: BatchResolver, names: list[str]) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, failures) for resolving `names` in batches."""
    cpu, wall, failures = time.process_time(), time.perf_counter(), 0
    for offset in range(0, len(names), BATCH):
        answers = resolver.resolve(names[offset : offset + BATCH])
        failures += sum(a.status is DomainStatus.FAILURE for a in answers.values())
    return time.process_time() - cpu, time.perf_counter() - wall, failures


WORKER_CPU: list[float] = []  # CPU seconds of every qcluster process, one entry per bulk stack
SETTINGS = {"ours": "config.settings", "c-ares": "bench.cares_settings"}


class _CpuStack(Stack):
    """A bulk stack on the resolver named in VERIFIER_BENCH_RESOLVER, noting its qcluster
    processes' CPU time before it stops them."""

    def __post_init__(self) -> None:
        self.settings_module = SETTINGS[os.environ.get("VERIFIER_BENCH_RESOLVER", "ours")]
        super().__post_init__()

    def close(self) -> None:
        WORKER_CPU.append(cpu_seconds([pid for worker in self.workers for pid in group_members(worker.pid)]))
        super().close()


Figures = dict[str, float]


def interleaved(args: argparse.Namespace, label: str, measure: Callable[[str, str], Figures]) -> None:
    """`measure(resolver name, DNS address)` for ours then c-ares, `--rounds` times; then each
    figure's median (min, max) per resolver and the ratio of the medians."""
    print(f"{label}; load average before: {_load()}")
    runs: dict[str, list[Figures]] = {name: [] for name in IMPLEMENTATIONS}
    with Processes(dict(os.environ)) as processes:
        dns = start_dns(processes, args.delay_ms)
        for round_ in range(args.rounds):
            for name, done in runs.items():
                done.append(measure(name, dns.address))
                shown = ", ".join(f"{key} {value:.2f}" for key, value in done[-1].items())
                print(f"round {round_ + 1} {name:7} {shown}  (load {_load()})")
    print(f"load average after: {_load()}")
    for key in runs["ours"][0]:
        medians = {}
        for name, done in runs.items():
            values = [figures[key] for figures in done]
            medians[name] = statistics.median(values)
            spread = f"min {min(values):.2f}, max {max(values):.2f}, n={len(values)}"
            print(f"{key}, {name:7} median {medians[name]:.2f} ({spread})")
        if medians["ours"]:
            print(f"{key}, c-ares / ours (medians): {medians['c-ares'] / medians['ours']:.3f}")


def bulk_job(data: Dataset, name: str, dns_address: str) -> Figures:
    os.environ["VERIFIER_BENCH_RESOLVER"] = name  # read by _CpuStack
    measurement = bulk.run(data, dns_address, bulk.SQLITE)[0]
    if measurement.errors:
        print("!!!", "; ".join(measurement.errors))
    return {"end-to-end s": measurement.seconds, "qcluster CPU s": WORKER_CPU[-1]}


def engine_run(data: Dataset, name: str, dns_address: str) -> Figures:
    engine.BatchResolver = IMPLEMENTATIONS[name]  # type: ignore[misc]
    started = time.process_time()
    measurement = engine.run(data, dns_address)
    if measurement.errors:
        print("!!!", "; ".join(measurement.errors))
    return {"seconds": measurement.seconds, "CPU s": time.process_time() - started}


def fairness_run(rows: int, name: str, dns_address: str) -> Figures:
    os.environ["VERIFIER_BENCH_RESOLVER"] = name
    small, big = fairness.run_fairness(dns_address, rows)
    return {"aggregate rows/s": big.rate, "small job s": small.seconds}


def queries_run(
    domain_count: int, resolvers: dict[str, BatchResolver], runs: Iterator[int], name: str, dns_address: str
) -> Figures:
    if name not in resolvers:  # one resolver per implementation, warmed up: imports, sockets, the pacer's RTT
        resolvers[name] = IMPLEMENTATIONS[name](ResolverConfig(nameservers=(dns_address,)))
        one_run(resolvers[name], domains(-1, name, BATCH))
    cpu, wall, failures = one_run(resolvers[name], domains(next(runs), name, domain_count))
    return {"CPU µs/query": cpu * 1e6 / domain_count, "wall s": wall, "failures": failures}


def _load() -> str:
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.resolvers")
    parser.add_argument("--domains", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--delay-ms", type=float, default=2.0)
    parser.add_argument("--bulk", action="store_true", help="time the bulk scenario's SQLite job instead")
    parser.add_argument("--rows", type=int, default=100_000, help="rows of the --bulk job")
    parser.add_argument("--engine", action="store_true", help="time the engine scenario instead")
    parser.add_argument("--fairness", action="store_true", help="time the fairness scenario's five jobs instead")
    args = parser.parse_args()
    bulk.Stack = fairness.Stack = _CpuStack  # type: ignore[misc]
    if args.bulk or args.engine:
        data = generate(args.rows)
        label = f"{len(data.rows):,} rows ({data.unique:,} unique)"
        return interleaved(args, label, partial(bulk_job if args.bulk else engine_run, data))
    if args.fairness:
        return interleaved(args, f"five jobs of {args.rows:,} rows", partial(fairness_run, args.rows))
    resolvers: dict[str, BatchResolver] = {}
    interleaved(args, f"{args.domains:,} domains a run", partial(queries_run, args.domains, resolvers, count()))


if __name__ == "__main__":
    main()
