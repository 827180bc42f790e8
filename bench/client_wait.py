"""What the Python client waits for on the default stack: a small job seen done, and a request on a
kept-alive connection.

    python -m bench.client_wait [RUNS]

On a fresh stack in `make run`'s shape (bench/outside.py), against the bench's loopback DNS server
at 2 ms, prints one JSON line:

- a 50-row fast job with a live key, from `bulk_submit` to `wait_for_job`'s return, RUNS times
  (5 by default) with the client's first pause as shipped (`FIRST_POLL_SECONDS`) and as it was
  (a pause of `poll_seconds`, 1 s, from the first poll), alternating;
- 30 `GET /healthz` on one `httpx` connection kept alive, each one's milliseconds: a server that
  held a reply's body for the client's delayed acknowledgement took 40 ms more for each.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time

import httpx
import verifier.client as client_module
from verifier import Client

from bench.data import generate
from bench.dnsd import start_dns
from bench.outside import MAKE_RUN, _start
from bench.procs import Processes
from bench.stack import Stack

SIDES = {"as shipped": client_module.FIRST_POLL_SECONDS, "a pause of poll_seconds from the first poll": 1.0}


def main(argv: list[str]) -> None:
    runs = int(argv[0]) if argv else 5
    waited: dict[str, list[float]] = {side: [] for side in SIDES}
    shipped = client_module.FIRST_POLL_SECONDS
    with Processes(dict(os.environ)) as processes:
        dns = start_dns(processes, 2.0)
        with Stack("sqlite", dns.address, extra_env=MAKE_RUN) as stack:
            account = stack.create_account("client-wait@bench.example", credits=runs * len(SIDES) * 50 + 100)
            rows = stack.tmp / "list.csv"  # removed with the stack
            rows.write_bytes(generate(50).csv_bytes())
            _start(stack)
            try:
                for _ in range(runs):
                    for side, first in SIDES.items():
                        client_module.FIRST_POLL_SECONDS = first
                        with Client(account.api_key, base_url=stack.base_url) as client:
                            started = time.monotonic()
                            job = client.wait_for_job(client.bulk_submit(rows)["id"])
                            waited[side].append(time.monotonic() - started)
                        assert job["status"] == "completed", job
            finally:
                client_module.FIRST_POLL_SECONDS = shipped
            with httpx.Client(base_url=stack.base_url) as http:
                http.get("/healthz")  # the connection is open from here on
                kept: list[float] = []
                for _ in range(30):
                    started = time.perf_counter()
                    http.get("/healthz").raise_for_status()
                    kept.append((time.perf_counter() - started) * 1000)
    print(
        json.dumps(
            {
                "load": os.getloadavg()[0],
                "small_job_seconds": {side: _spread(values) for side, values in waited.items()},
                "kept_alive_healthz_ms": _spread(kept),
            }
        )
    )


def _spread(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 4), "min": round(min(values), 4), "max": round(max(values), 4)}


if __name__ == "__main__":
    main(sys.argv[1:])
