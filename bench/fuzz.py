"""The schema fuzzer: every door of a live service, a fixed seed, a bounded number of cases.

    python -m bench.fuzz [--examples 20] [--seed 20261127] [--backend sqlite|postgres]   (or: make fuzz)

Starts the loopback DNS server, a fresh stack (gunicorn and a qcluster) and an Enterprise account,
then, with schemathesis and hypothesis seeded alike (each operation's cases start from the seed):

1. every operation of /v1/openapi.json, `--examples` generated cases each, checked for no 5xx, a
   documented status and a body that matches the schema (the keys operations on an account of
   their own, each with its own key, as a case may revoke or cap any key of its account);
2. the four sending services' webhooks (outside the schema), `--examples` events each shaped like
   the service's (bench/fuzz_doors.py): never a 5xx, an error in the one shape, else a tally;
3. hostile bodies (JSON nested 100,000 deep, 3 MB, NUL, invalid UTF-8, UTF-16, lone surrogates,
   wrong content types) at every one of those doors and Stripe's webhook: never a 5xx, an error
   in the one shape (docs/api.md, "Body limits").

Prints the cases and failures per operation, and the seed; exits 1 on any failure. Traffic stays
on loopback: the DNS server, the web server, and the callbacks and SNS URLs (refused or unreachable).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance, status_code_conformance

from bench.dnsd import start_dns
from bench.fuzz_doors import HOSTILE_BODIES, WEBHOOK_EVENTS, error_shaped
from bench.procs import Processes
from bench.stack import Stack

CHECKS = [not_a_server_error, status_code_conformance, response_schema_conformance]
# Values for a path's parameters when a hostile body is sent: ids that exist nowhere.
PATH_VALUES = {"{job_id}": "job_doesnotexist", "{key_id}": "999999999", "{token}": "nosuchtoken"}
MAX_FAILURES_SHOWN = 3
# A case's check: the status answered, and what is wrong with the answer (None: nothing).
Check = Callable[[Any], tuple[int, str | None]]


@dataclass
class Tally:
    """Cases run and failures found, per operation, in the order they were run."""

    rows: dict[str, list[float]] = field(default_factory=dict)  # name: [cases, failures, seconds]
    statuses: dict[str, set[int]] = field(default_factory=dict)  # name: the statuses answered
    failures: list[str] = field(default_factory=list)

    def run(self, name: str, strategy: st.SearchStrategy[Any], check: Check, *, n: int, at: int) -> None:
        counts = self.rows.setdefault(name, [0, 0, 0.0])
        seen = self.statuses.setdefault(name, set())
        started = time.perf_counter()

        @seed(at)
        @settings(
            max_examples=n, deadline=None, database=None, phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )  # fmt: skip
        @given(value=strategy)
        def cases(value: Any) -> None:
            counts[0] += 1
            status, problem = check(value)
            seen.add(status)
            if problem is not None:  # recorded, not raised: every case runs, the report counts them all
                counts[1] += 1
                self.failures.append(f"{name}: {problem}")

        cases()
        counts[2] += time.perf_counter() - started

    def each(self, name: str, items: list[Any], check: Check) -> None:
        """Every one of `items`, in order (a fixed list: nothing to generate)."""
        started = time.perf_counter()
        answers = [check(item) for item in items]
        problems = [problem for _, problem in answers if problem is not None]
        self.rows[name] = [len(items), len(problems), time.perf_counter() - started]
        self.statuses[name] = {status for status, _ in answers}
        self.failures += [f"{name}: {problem}" for problem in problems]

    def report(self, seed_value: int, examples: int) -> str:
        lines = [f"bench.fuzz: seed {seed_value}, up to {examples} generated cases per operation", ""]
        lines += [f"{'operation':<58} {'cases':>6} {'failures':>9} {'seconds':>8}  statuses"]
        lines += [
            f"{name:<58} {n:>6.0f} {failed:>9.0f} {took:>8.1f}  {' '.join(map(str, sorted(self.statuses[name])))}"
            for name, (n, failed, took) in self.rows.items()
        ]
        total = int(sum(row[0] for row in self.rows.values()))
        lines += ["", f"{len(self.rows)} operations, {total} cases, {len(self.failures)} failures"]
        lines += [f"  {failure[:400]}" for failure in self.failures[:MAX_FAILURES_SHOWN]]
        return "\n".join(lines)


def schema_operations(tally: Tally, base: str, keys: Keys, *, n: int, at: int) -> list[tuple[str, str]]:
    """Every operation of the schema, fuzzed; returns (method, path) of each, for the hostile bodies."""
    schema = schemathesis.openapi.from_url(f"{base}/v1/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    # A keys case may revoke or cap any key of its account (ids are small numbers, which hypothesis
    # tries first): the keys operations run on an account of their own, each with a key made for it
    # before any of them runs.
    own = {op.path + op.method: keys.minted() for op in operations if op.path.startswith("/v1/keys")}
    for operation in operations:
        key = own.get(operation.path + operation.method, keys.shared)
        tally.run(
            f"{operation.method.upper()} {operation.path}", operation.as_strategy(), _schema_check(key), n=n, at=at
        )
    return [(operation.method.upper(), operation.path) for operation in operations]


@dataclass
class Keys:
    """The fuzz's keys: `shared` (an Enterprise account's) for everything but the keys operations,
    and keys minted on demand from `keys_master`, on a second account."""

    base: str
    shared: str
    keys_master: str

    def minted(self) -> str:
        answer = requests.post(
            f"{self.base}/v1/keys",
            json={"name": "fuzz"},
            headers={"Authorization": f"Bearer {self.keys_master}"},
            timeout=60,
        )
        answer.raise_for_status()
        return str(answer.json()["key"])


def _schema_check(key: str) -> Check:
    def check(case: Any) -> tuple[int, str | None]:
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {key}"}
        response = case.call(timeout=60)
        try:
            case.validate_response(response, checks=CHECKS)
        except Exception as failure:  # schemathesis raises its own failure types, grouped
            return response.status_code, f"{case.method} {case.formatted_path}: {str(failure)[:300]}"
        return response.status_code, None

    return check


def webhooks(tally: Tally, base: str, key: str, *, n: int, at: int) -> dict[str, str]:
    """Each sending service's webhook fuzzed with events of its shape; returns their URLs."""
    urls: dict[str, str] = requests.get(
        f"{base}/v1/account", headers={"Authorization": f"Bearer {key}"}, timeout=30
    ).json()["feedback_webhooks"]
    for provider, url in urls.items():
        tally.run(
            f"POST /webhooks/feedback/{provider}/{{token}}", WEBHOOK_EVENTS[provider], _webhook_check(url), n=n, at=at
        )
    return urls


def _webhook_check(url: str) -> Check:
    def check(event: Any) -> tuple[int, str | None]:
        response = requests.post(url, json=event, timeout=60)
        problem = error_shaped(response.status_code, response.headers.get("Content-Type", ""), response.content)
        if (
            problem is None
            and response.status_code == 200
            and set(response.json()) - {"accepted", "ignored", "confirmed"}
        ):
            problem = f"200 with {response.text[:200]}"
        return response.status_code, problem

    return check


def hostile_bodies(tally: Tally, base: str, key: str, doors: list[tuple[str, str]]) -> None:
    """Every hostile body at every door: the schema's operations, the webhooks, Stripe's."""
    for method, path in doors:
        for template, value in PATH_VALUES.items():
            path = path.replace(template, value)
        url = path if path.startswith("http") else base + path
        shown = re.sub(r"^https?://[^/]+", "", path)
        name = f"hostile bodies: {method} {re.sub(r'/[A-Za-z0-9]{32}$', '/{token}', shown)}"
        tally.each(name, HOSTILE_BODIES, _hostile_check(method, url, key))


def _hostile_check(method: str, url: str, key: str) -> Check:
    def check(body: tuple[str, str, bytes]) -> tuple[int, str | None]:
        name, content_type, data = body
        headers = {"Content-Type": content_type, "Authorization": f"Bearer {key}"}
        response = requests.request(method, url, data=data, headers=headers, timeout=60)
        problem = error_shaped(response.status_code, response.headers.get("Content-Type", ""), response.content)
        return response.status_code, None if problem is None else f"{name}: {problem}"

    return check


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fuzz")
    parser.add_argument("--examples", type=int, default=20, help="generated cases per operation (at most)")
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--seed", type=int, default=20261127)
    args = parser.parse_args()
    tally = Tally()
    with Processes(dict(os.environ)) as processes:
        dns = start_dns(processes, 0.0)
        with Stack(args.backend, dns.address, extra_env={"CALLBACK_ALLOW_PRIVATE_NETWORKS": "0"}) as stack:
            stack.start_web(workers=2)
            stack.start_qcluster()
            base, n, at = stack.base_url, args.examples, args.seed
            shared, master = (stack.create_account(f"fuzz{i}@example.com", 10**7, "enterprise").api_key for i in (1, 2))
            doors = schema_operations(tally, base, Keys(base, shared, master), n=n, at=at)
            urls = webhooks(tally, base, shared, n=n, at=at)
            doors += [("POST", url) for url in urls.values()] + [("POST", "/webhooks/stripe")]
            hostile_bodies(tally, base, shared, doors)
    print(tally.report(args.seed, args.examples))
    return 1 if tally.failures else 0


if __name__ == "__main__":
    sys.exit(main())
