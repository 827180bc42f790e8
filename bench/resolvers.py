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
from pathlib import Path

from bench import bulk, engine, fairness
from bench.cares_resolver import CaresResolver
from bench.data import generate
from bench.dnsd import start_dns
from bench.procs import Processes, group_members
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
SETTINGS = {"ours": "config.settings", "cares": "bench.cares_settings"}


class _CpuStack(Stack):
    """A bulk stack on the resolver named in VERIFIER_BENCH_RESOLVER, noting its qcluster
    processes' CPU time before it stops them."""

    def __post_init__(self) -> None:
        self.settings_module = SETTINGS[os.environ.get("VERIFIER_BENCH_RESOLVER", "ours")]
        super().__post_init__()

    def close(self) -> None:
        WORKER_CPU.append(sum(_cpu_seconds(pid) for worker in self.workers for pid in group_members(worker.pid)))
        super().close()


def _cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def bulk_jobs(args: argparse.Namespace) -> None:
    bulk.Stack = fairness.Stack = _CpuStack  # type: ignore[misc]
    data = generate(args.rows)
    print(f"{len(data.rows):,} rows ({data.unique:,} unique); load average before: {_load()}")
    seconds: dict[str, list[float]] = {"ours": [], "cares": []}
    cpu: dict[str, list[float]] = {"ours": [], "cares": []}
    with Processes(dict(os.environ)) as processes:
        dns = start_dns(processes, args.delay_ms)
        for round_ in range(args.rounds):
            for name, runs in seconds.items():
                os.environ["VERIFIER_BENCH_RESOLVER"] = name
                measurement = bulk.run(data, dns.address, bulk.SQLITE)[0]
                runs.append(measurement.seconds)
                cpu[name].append(WORKER_CPU[-1])
                errors = "; ".join(measurement.errors) or "ok"
                print(
                    f"round {round_ + 1} {name:5} {measurement.seconds:6.2f} s, qcluster CPU {WORKER_CPU[-1]:5.2f} s, "
                    f"load {_load()}  {errors}"
                )
    print(f"load average after: {_load()}")
    for name, runs in seconds.items():
        print(f"{name:5} end-to-end s {_spread(runs)}; qcluster CPU s {_spread(cpu[name])}")
    for label, figures in (("end-to-end", seconds), ("qcluster CPU", cpu)):
        ratio = statistics.median(figures["cares"]) / statistics.median(figures["ours"])
        print(f"c-ares / ours, {label} (medians): {ratio:.3f}")


def engine_runs(args: argparse.Namespace) -> None:
    data = generate(args.rows)
    print(f"{len(data.rows):,} rows ({data.unique:,} unique); load average before: {_load()}")
    seconds: dict[str, list[float]] = {name: [] for name in IMPLEMENTATIONS}
    cpu: dict[str, list[float]] = {name: [] for name in IMPLEMENTATIONS}
    with Processes(dict(os.environ)) as processes:
        dns = start_dns(processes, args.delay_ms)
        for round_ in range(args.rounds):
            for name, cls in IMPLEMENTATIONS.items():
                engine.BatchResolver = cls  # type: ignore[misc]
                started = time.process_time()
                measurement = engine.run(data, dns.address)
                seconds[name].append(measurement.seconds)
                cpu[name].append(time.process_time() - started)
                errors = "; ".join(measurement.errors) or "ok"
                print(f"round {round_ + 1} {name:7} {measurement.seconds:5.2f} s, CPU {cpu[name][-1]:5.2f} s  {errors}")
    print(f"load average after: {_load()}")
    for name, runs in seconds.items():
        print(f"{name:7} seconds {_spread(runs)}; CPU s {_spread(cpu[name])}")
    print(f"c-ares / ours (medians): {statistics.median(seconds['c-ares']) / statistics.median(seconds['ours']):.3f}")


def fairness_runs(args: argparse.Namespace) -> None:
    bulk.Stack = fairness.Stack = _CpuStack  # type: ignore[misc]
    print(f"load average before: {_load()}")
    rates: dict[str, list[float]] = {"ours": [], "cares": []}
    with Processes(dict(os.environ)) as processes:
        dns = start_dns(processes, args.delay_ms)
        for round_ in range(args.rounds):
            for name, runs in rates.items():
                os.environ["VERIFIER_BENCH_RESOLVER"] = name
                small, big = fairness.run_fairness(dns.address, args.rows)
                runs.append(big.rate)
                print(f"round {round_ + 1} {name:5} {big.rate:8.0f} rows/s, small job {small.seconds:.2f} s")
    print(f"load average after: {_load()}")
    for name, runs in rates.items():
        print(f"{name:5} aggregate rows/s {_spread(runs)}")
    print(f"c-ares / ours (medians): {statistics.median(rates['cares']) / statistics.median(rates['ours']):.3f}")


def _spread(values: list[float]) -> str:
    return f"median {statistics.median(values):.2f} (min {min(values):.2f}, max {max(values):.2f}, n={len(values)})"


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
    if args.bulk:
        return bulk_jobs(args)
    if args.engine:
        return engine_runs(args)
    if args.fairness:
        return fairness_runs(args)
    print(f"load average before: {os.getloadavg()}")
    results: dict[str, list[tuple[float, float, int]]] = {name: [] for name in IMPLEMENTATIONS}
    with Processes(dict(os.environ)) as processes:
        dns = start_dns(processes, args.delay_ms)
        config = ResolverConfig(nameservers=(dns.address,))
        resolvers = {name: cls(config) for name, cls in IMPLEMENTATIONS.items()}
        for name, resolver in resolvers.items():  # warm-up: imports, first sockets, the pacer's RTT
            one_run(resolver, domains(-1, name, BATCH))
        for round_ in range(args.rounds):
            for name, resolver in resolvers.items():
                cpu, wall, failures = one_run(resolver, domains(round_, name, args.domains))
                results[name].append((cpu, wall, failures))
                print(f"round {round_ + 1} {name:7} cpu {cpu * 1e6 / args.domains:6.1f} µs/query  wall {wall:5.2f} s")
    print(f"load average after: {os.getloadavg()}")
    for name, runs in results.items():
        per_query = [c * 1e6 / args.domains for c, _, _ in runs]
        walls = [w for _, w, _ in runs]
        print(
            f"{name:7} CPU µs/query median {statistics.median(per_query):.1f} "
            f"(min {min(per_query):.1f}, max {max(per_query):.1f}); "
            f"wall s median {statistics.median(walls):.2f} (min {min(walls):.2f}, max {max(walls):.2f}); "
            f"failures {sum(f for _, _, f in runs)}"
        )


if __name__ == "__main__":
    main()
