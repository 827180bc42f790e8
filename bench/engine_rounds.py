"""The `engine` scenario's rounds alone, each with the CPU it used: for comparing two trees.

    python -m bench.engine_rounds [ROUNDS]

Runs `bench.engine.run` ROUNDS times (3 by default) on the bench's 100,000-row list against a
warmed `bench.dnsd` at 2 ms, as `python -m bench --only engine` does, and prints one JSON line:
each round's wall seconds, CPU seconds of this process (`time.process_time`) and rows/s. It imports
nothing but the engine scenario, so it also runs in a tree whose `verification/engine` is an older
one's (bench/README.md, "The engine's figures, tenth pass").
"""

from __future__ import annotations

import json
import os
import sys
import time

from bench import engine
from bench.data import generate
from bench.dnsd import start_dns
from bench.procs import Processes


def main(argv: list[str]) -> None:
    rounds = int(argv[0]) if argv else 3
    data = generate(100_000)
    measured = []
    with Processes(dict(os.environ)) as processes:
        dns = start_dns(processes, 2.0, warm=data)
        for _ in range(rounds):
            wall, cpu = time.perf_counter(), time.process_time()
            measurement = engine.run(data, dns.address)
            measured.append(
                {
                    "wall_s": round(time.perf_counter() - wall, 4),
                    "cpu_s": round(time.process_time() - cpu, 4),
                    "rows_per_s": round(measurement.rate),
                }
            )
    print(json.dumps({"load": os.getloadavg()[0], "rounds": measured}))


if __name__ == "__main__":
    main(sys.argv[1:])
