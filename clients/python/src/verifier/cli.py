"""`verifier`: the command line tool (README.md beside this package lists every command).

Reads the key from --api-key or VERIFIER_API_KEY, the service from --base-url or
VERIFIER_BASE_URL, how often a lost connection, a 429 or a 5xx is asked again from --retries or
VERIFIER_RETRIES (4), and how long to wait for an answer from VERIFIER_TIMEOUT (30 s). Results go
to stdout as JSON; progress and errors to stderr. Exit status 0 on success, 1 on an API error, 2
on a usage error.
"""

from __future__ import annotations

import argparse
import csv
import functools
import io
import json
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

import httpx

from verifier.client import Client, VerifierError
from verifier.types import Job


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    # Absent from the namespace unless given (set_defaults would change the action the subcommands share).
    args.api_key, args.base_url = getattr(args, "api_key", None), getattr(args, "base_url", None)
    try:
        retries = getattr(args, "retries", None)
        retries = _retries(os.environ.get("VERIFIER_RETRIES") or str(DEFAULT_RETRIES)) if retries is None else retries
        timeout = _timeout(os.environ.get("VERIFIER_TIMEOUT") or str(DEFAULT_TIMEOUT))
        with Client(args.api_key, base_url=args.base_url, max_retries=retries, timeout=timeout) as client:
            return int(args.run(client, args) or 0)
    except VerifierError as error:
        print(f"error: {error.status} {error.code}: {error.message}", file=sys.stderr)
        return 1
    except httpx.TransportError as error:
        # One line, not a traceback: the service is down, unreachable or not answering in time.
        print(
            f"error: cannot reach {args.base_url or _default_base_url()}: {error or type(error).__name__}",
            file=sys.stderr,
        )
        return 1
    except (ValueError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


DEFAULT_RETRIES = 4
DEFAULT_TIMEOUT = 30.0


def _timeout(value: str) -> float:
    """Seconds to wait for an answer: a number from 0.1 to 600."""
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not 0.1 <= seconds <= 600:
        raise ValueError(f"VERIFIER_TIMEOUT must be a number of seconds from 0.1 to 600, not {value!r}")
    return seconds


def _retries(value: str) -> int:
    """A count of retries: a whole number from 0 to 10."""
    if not value.isdigit() or int(value) > 10:
        raise ValueError(f"retries must be a whole number from 0 to 10, not {value!r}")
    return int(value)


def _default_base_url() -> str:
    return os.environ.get("VERIFIER_BASE_URL") or "http://localhost:8000"


def _parser() -> argparse.ArgumentParser:
    # --api-key and --base-url work before or after the command (`verifier verify x@y.com --api-key K`):
    # every parser knows them, and one that was not given them leaves the other's value alone.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--api-key", default=argparse.SUPPRESS, help="default: $VERIFIER_API_KEY")
    common.add_argument(
        "--base-url", default=argparse.SUPPRESS, help="default: $VERIFIER_BASE_URL, else http://localhost:8000"
    )
    common.add_argument(
        "--retries",
        type=_retries,
        default=argparse.SUPPRESS,
        help="asks again after a lost connection, a 429 or a 5xx, with backoff; default: $VERIFIER_RETRIES, else 4",
    )
    parser = argparse.ArgumentParser(
        prog="verifier", description="The email verification API from the command line.", parents=[common]
    )
    commands = parser.add_subparsers(required=True, metavar="COMMAND")
    add_parser = functools.partial(commands.add_parser, parents=[common])

    verify = add_parser("verify", help="verify one address (1 credit)")
    verify.add_argument("address")
    verify.add_argument("--deep", action="store_true", help="validation_mode deep")
    verify.set_defaults(run=_verify)

    batch = add_parser("batch", help="verify the addresses of a file, 100 per request, one JSON line each")
    batch.add_argument("file", type=Path, help="one address a line, or a CSV whose first column is the address")
    batch.add_argument("--deep", action="store_true", help="validation_mode deep")
    batch.set_defaults(run=_batch)

    bulk = add_parser("bulk", help="submit a CSV as a bulk job")
    bulk.add_argument("file", type=Path)
    bulk.add_argument("--wait", action="store_true", help="wait for the job, showing its progress")
    bulk.add_argument("--out", type=Path, help="with --wait: write the result CSV here")
    bulk.add_argument("--callback-url", help="POSTed to when the job finishes")
    bulk.add_argument("--email-column", help="the address column: a header name or a 1-based number")
    bulk.add_argument("--deep", action="store_true", help="validation_mode deep")
    bulk.set_defaults(run=_bulk)

    account = add_parser("account", help="plan, balance, usage and the key in use")
    account.set_defaults(run=_account)

    _keys_parser(commands)
    mcp = commands.add_parser("mcp", help="serve the Model Context Protocol over stdio (needs the [mcp] extra)")
    mcp.add_argument(
        "--root", type=Path, help="bulk_submit reads files only under it; default: $VERIFIER_MCP_ROOT, else here"
    )
    mcp.set_defaults(run=_mcp)
    return parser


def _keys_parser(commands: Any) -> None:
    keys = commands.add_parser("keys", help="list, create, change and revoke keys (an owner's or admin's full key)")
    actions = keys.add_subparsers(required=True, metavar="ACTION")
    actions.add_parser("list", help="the account's active keys").set_defaults(run=_keys_list)
    create = actions.add_parser("create", help="make a key; prints it once")
    create.add_argument("--name", default="Default")
    create.add_argument("--publishable", action="store_true", help="a publishable key, for web pages (the widget)")
    create.add_argument("--test", action="store_true", help="a test key: sandbox answers, no credit")
    create.add_argument("--scope", choices=["full", "verify", "read"])
    create.add_argument("--origin", action="append", default=[], help="an allowed origin (publishable; repeat)")
    _cap_arguments(create)
    create.set_defaults(run=_keys_create)
    update = actions.add_parser("update", help="rename a key, set its caps or origins")
    update.add_argument("key_id", type=int)
    update.add_argument("--name")
    update.add_argument("--origin", action="append", help="the allowed origins, all of them (repeat)")
    _cap_arguments(update)
    update.set_defaults(run=_keys_update)
    revoke = actions.add_parser("revoke", help="revoke a key at once")
    revoke.add_argument("key_id", type=int)
    revoke.set_defaults(run=_keys_revoke)


def _cap_arguments(parser: argparse.ArgumentParser) -> None:
    for period, unit in (("daily", "UTC day"), ("monthly", "calendar month")):
        parser.add_argument(f"--{period}-cap", type=_cap, default=_UNSET, help=f"credits a {unit}; 'none': no cap")


def _cap(text: str) -> int | None:
    return None if text.lower() == "none" else int(text)


def _caps(args: argparse.Namespace) -> dict[str, int | None]:
    given = {"daily_cap": args.daily_cap, "monthly_cap": args.monthly_cap}
    return {name: value for name, value in given.items() if value is not _UNSET}


def _keys_list(client: Client, args: argparse.Namespace) -> None:
    _print_json(client.keys())


def _keys_create(client: Client, args: argparse.Namespace) -> None:
    _print_json(
        client.create_key(
            name=args.name,
            kind="publishable" if args.publishable else "secret",
            mode="test" if args.test else "live",
            scope=args.scope,
            allowed_origins=args.origin or None,
            **_caps(args),
        )
    )


def _keys_update(client: Client, args: argparse.Namespace) -> None:
    changes: dict[str, Any] = _caps(args)
    if args.name is not None:
        changes["name"] = args.name
    if args.origin is not None:
        changes["allowed_origins"] = args.origin
    _print_json(client.update_key(args.key_id, **changes))


def _keys_revoke(client: Client, args: argparse.Namespace) -> None:
    client.revoke_key(args.key_id)
    print(f"key {args.key_id} revoked", file=sys.stderr)


def _mcp(client: Client, args: argparse.Namespace) -> None:
    from verifier.mcp_server import serve

    serve(client, args.root)


_UNSET: Any = object()  # an option not given: the key's value stays


def _verify(client: Client, args: argparse.Namespace) -> None:
    _print_json(client.verify(args.address, validation_mode=_mode(args)))


def _batch(client: Client, args: argparse.Namespace) -> None:
    for result in client.verify_many(_addresses(args.file), validation_mode=_mode(args)):
        print(json.dumps(result, ensure_ascii=False))


def _bulk(client: Client, args: argparse.Namespace) -> int:
    if args.out and not args.wait:
        raise ValueError("--out needs --wait")
    receipt = client.bulk_submit(
        args.file, callback_url=args.callback_url, email_column=args.email_column, validation_mode=_mode(args)
    )
    print(
        f"job {receipt['id']}: {receipt['total_emails']} addresses, about {receipt['estimated_seconds']} s",
        file=sys.stderr,
    )
    if not args.wait:
        _print_json(receipt)
        return 0
    job = _wait(client, receipt["id"], receipt["total_emails"])
    if args.out and job["status"] == "completed":
        args.out.write_bytes(client.job_results(job["id"]))
        print(f"results written to {args.out}", file=sys.stderr)
    _print_json(job)
    return 0 if job["status"] == "completed" else 1


def _account(client: Client, args: argparse.Namespace) -> None:
    _print_json(client.account())


def _wait(client: Client, job_id: str, total: int) -> Job:
    """A progress bar on a terminal; plain lines, one per change, otherwise (logs, pipes, CI)."""
    if sys.stderr.isatty():
        from rich.console import Console
        from rich.progress import Progress

        with Progress(console=Console(stderr=True)) as bar:
            task = bar.add_task(job_id, total=total)
            return client.wait_for_job(job_id, on_progress=lambda job: bar.update(task, completed=_done(job)))
    seen: list[int] = []

    def line(job: Job) -> None:
        if not seen or seen[-1] != _done(job) or job["status"] in ("completed", "failed"):
            seen.append(_done(job))
            print(f"{job_id} {job['status']}: {_done(job)}/{job['progress']['total']}", file=sys.stderr)

    return client.wait_for_job(job_id, on_progress=line)


def _done(job: Job) -> int:
    return job["progress"]["processed"]


def _addresses(path: Path) -> Iterator[str]:
    """One address a line, or the first column of a CSV; blank lines and a header `email` skipped."""
    text = path.read_text(encoding="utf-8-sig")
    for number, row in enumerate(csv.reader(io.StringIO(text))):
        cell = row[0].strip() if row else ""
        if cell and not (number == 0 and cell.lower() == "email"):
            yield cell


def _mode(args: argparse.Namespace) -> str:
    return "deep" if args.deep else "fast"


def _print_json(value: Any, out: TextIO | None = None) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False), file=out or sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
