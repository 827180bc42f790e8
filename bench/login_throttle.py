"""Parallel wrong-password log-ins for one user against a live gunicorn: how many passwords get checked.

    python -m bench.login_throttle [--attempts 40] [--runs 3] [--workers 4] [--database-url URL] [--redis-url URL]

Each run opens a fresh account, gives every attempt its own session (with its CSRF token),
releases all attempts at once and counts the answers that are not the lock-out message: those
had their password checked. The throttle allows 5 per username and address (accounts/login_throttle.py).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import threading
import uuid

import requests

from bench.dnsd import start_dns
from bench.procs import Processes
from bench.stack import Stack

LOCKED_OUT = "Too many failed log-in attempts"


def login_session(base_url: str) -> tuple[requests.Session, str]:
    session = requests.Session()
    page = session.get(f"{base_url}/login", timeout=30).text
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert token is not None
    return session, token.group(1)


def password_checks(base_url: str, email: str, attempts: int) -> int:
    sessions = [login_session(base_url) for _ in range(attempts)]
    barrier, locked_out = threading.Barrier(attempts), []

    def attempt(session: requests.Session, token: str) -> None:
        data = {"username": email, "password": "wrong", "csrfmiddlewaretoken": token}
        barrier.wait()
        answer = session.post(f"{base_url}/login", data=data, timeout=120)
        locked_out.append(LOCKED_OUT in answer.text)

    threads = [threading.Thread(target=attempt, args=pair) for pair in sessions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(locked_out) == attempts
    return locked_out.count(False)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.login_throttle")
    parser.add_argument("--attempts", type=int, default=40)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=4, help="gunicorn sync workers")
    parser.add_argument("--database-url", default="", help="default: a temp SQLite file")
    parser.add_argument("--redis-url", default="", help="default: no Redis")
    args = parser.parse_args()
    extra = {"DATABASE_URL": args.database_url} if args.database_url else {}
    extra |= {"REDIS_URL": args.redis_url} if args.redis_url else {}
    with Processes(dict(os.environ)) as processes:
        dns = start_dns(processes, 0.0)
        with Stack("sqlite", dns.address, extra_env=extra) as stack:
            stack.start_web(workers=args.workers)
            counts = []
            for _ in range(args.runs):
                email = f"victim-{uuid.uuid4().hex[:8]}@company.example.com"
                stack.create_account(email, credits=1, plan="free")
                counts.append(password_checks(stack.base_url, email, args.attempts))
    print(f"password checks under {args.attempts} parallel attempts, {args.runs} runs: {counts}")
    print(f"median {statistics.median(counts)}, min {min(counts)}, max {max(counts)}")


if __name__ == "__main__":
    main()
