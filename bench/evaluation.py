"""A free account's list evaluation (docs/bulk.md, "Evaluate a list"): how long the bulk preview of a
10,000-row list with many domains takes, estimate included, and that no credit moves.

    python -m bench.evaluation [--rows 10000] [--domains 2000] [--runs 3] [--delay-ms 2]

One stack (gunicorn -w 2 on SQLite, no qcluster: the preview queues nothing), the loopback DNS
server answering after `--delay-ms`. A free-plan account previews `--runs` lists over HTTP, after
one tiny warm-up preview: upload start → answer. Each list has company domains of its own, so its
sample's domains are new to the domain cache (the free providers' are cached after the first).
Prints one line per list, then the median with min–max and the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import requests

from bench.data import generate
from bench.dnsd import start_dns
from bench.procs import Processes
from bench.stack import Stack


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.evaluation")
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--domains", type=int, default=2_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--delay-ms", type=float, default=2.0)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    seconds = []
    with Processes(dict(os.environ)) as processes:
        dns = start_dns(processes, args.delay_ms)
        with Stack("sqlite", dns.address) as stack:
            account = stack.create_account("free@bench.example", credits=0, plan="free")
            stack.start_web(workers=2)
            headers = {"Authorization": f"Bearer {account.api_key}"}
            # a worker's first request builds what it keeps
            _preview(stack.base_url, headers, b"email\nwarm@up.example\n")
            for seed in range(1, args.runs + 1):
                # company domains of this list alone (co<i>.com renamed), so no list finds another's in the cache
                listed = generate(args.rows, args.domains, seed=seed).csv_bytes()
                content = listed.replace(b"@co", f"@l{seed}co".encode())
                response = _preview(stack.base_url, headers, content)
                took = response.elapsed.total_seconds()
                body = response.json()
                if response.status_code != 200 or body.get("estimate") is None:
                    print(f"preview refused or without an estimate: {response.status_code} {response.text[:300]}")
                    return 1
                estimate = body["estimate"]
                account_now = _account(stack.base_url, headers)
                print(
                    f"list {seed}: {took:.3f} s, {body['rows']} rows, sample {estimate.get('sample_size')}, "
                    f"credits {account_now['credits_remaining']}"
                )
                seconds.append(took)
    print(
        f"median {statistics.median(seconds):.3f} s (min {min(seconds):.3f}, max {max(seconds):.3f}) over "
        f"{len(seconds)} lists; load average after: {os.getloadavg()[0]:.2f}"
    )
    return 0


def _preview(base_url: str, headers: dict[str, str], content: bytes) -> requests.Response:
    """The preview, after a second's pause: the free plan's per-second rate counts the calls before."""
    time.sleep(1.0)
    return requests.post(
        f"{base_url}/v1/verify/bulk/preview",
        files={"file": ("list.csv", content, "text/csv")},
        headers=headers,
        timeout=120,
    )


def _account(base_url: str, headers: dict[str, str]) -> dict[str, object]:
    """GET /v1/account, waiting out the free plan's per-second rate if the preview just used it."""
    for _ in range(10):
        response = requests.get(f"{base_url}/v1/account", headers=headers, timeout=30)
        if response.status_code != 429:
            response.raise_for_status()
            return dict(response.json())
        time.sleep(float(response.headers.get("Retry-After", "1")))
    raise RuntimeError("GET /v1/account stayed 429")


if __name__ == "__main__":
    sys.exit(main())
