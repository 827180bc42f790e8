"""How close `estimated_seconds` comes to a job's real time (docs/bulk.md: within a factor of 3).

    python -m bench.estimate [--rows 20000] [--runs 3] [--backend sqlite|postgres]

One stack (gunicorn, one qcluster, the loopback DNS server at 2 ms). A first job of
``--rows`` rows runs so that the service has measured its throughput; then ``--runs`` more
jobs of the same size (each list shuffled afresh; the domains repeat, so they find the domain
cache warm, as a customer's next list often would) are submitted one after another. For
each: the estimate given at submission, the real time from the upload to the signed
callback, and their ratio. Prints one line per job and the median ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import requests

from bench import bulk
from bench.data import Dataset, default_domains, generate
from bench.dnsd import start_dns
from bench.procs import Processes
from bench.receiver import Receiver
from bench.stack import Account, Stack


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.estimate")
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    args = parser.parse_args()
    lists = [generate(args.rows, default_domains(args.rows), seed=seed) for seed in range(args.runs + 1)]
    with Processes(dict(os.environ)) as processes:
        dns = start_dns(processes, 2.0)
        with Stack(args.backend, dns.address) as stack, Receiver() as receiver:
            account = stack.create_account("estimate@bench.example", credits=args.rows * (args.runs + 2))
            receiver.secret = account.signing_secret
            stack.start_web(workers=2)
            stack.start_qcluster()
            time.sleep(bulk.WORKER_BOOT_SECONDS)
            ratios = [_job(stack, account, receiver, data, label) for label, data in _labelled(lists)]
    print(f"median real/estimate over the {args.runs} measured jobs: {statistics.median(ratios[1:]):.2f}")
    return 0


def _labelled(lists: list[Dataset]) -> list[tuple[str, Dataset]]:
    return [("first (default rate)" if i == 0 else f"run {i}", data) for i, data in enumerate(lists)]


def _job(stack: Stack, account: Account, receiver: Receiver, data: Dataset, label: str) -> float:
    started = time.monotonic()
    response = requests.post(
        f"{stack.base_url}/v1/verify/bulk",
        files={"file": ("estimate.csv", data.csv_bytes(), "text/csv")},
        data={"callback_url": receiver.url},
        headers={"Authorization": f"Bearer {account.api_key}"},
        timeout=120,
    )
    response.raise_for_status()
    receipt = response.json()
    callback = bulk._wait(stack, account, receiver, receipt["id"])
    real = callback.arrived - started
    ratio = real / receipt["estimated_seconds"]
    print(f"{label}: {len(data.rows):,} rows, estimate {receipt['estimated_seconds']} s, real {real:.1f} s, "
          f"real/estimate {ratio:.2f}", flush=True)  # fmt: skip
    return ratio


if __name__ == "__main__":
    sys.exit(main())
