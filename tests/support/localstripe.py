"""localstripe (a stateful Stripe stand-in, PyPI) on loopback, for the tests and `make run`.

Its own `localstripe` command listens on every interface ("::") and keeps its store in
/tmp/localstripe.pickle, shared by every copy on the machine: this launcher serves the same
app on 127.0.0.1 only, from an empty store kept in memory.

    python -m tests.support.localstripe --port 8420
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]


def serve(port: int) -> None:
    from aiohttp import web
    from localstripe import resources, server

    resources.Store.dump_to_disk = lambda self: None  # type: ignore[method-assign]
    web.run_app(server.app, host="127.0.0.1", port=port, print=None, access_log=None)


@dataclass(frozen=True)
class LocalStripe:
    url: str  # STRIPE_API_BASE

    @property
    def js_url(self) -> str:  # STRIPE_JS_URL
        return f"{self.url}/js.stripe.com/v3/"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running(port: int | None = None) -> Iterator[LocalStripe]:
    """A localstripe process on a free loopback port, ready when this yields, stopped after."""
    port = port or free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.localstripe", "--port", str(port)], cwd=ROOT, start_new_session=True
    )
    try:
        _wait_for(port, process)
        yield LocalStripe(url=f"http://127.0.0.1:{port}")
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(10)


def _wait_for(port: int, process: subprocess.Popen[bytes]) -> None:
    def listening() -> bool:
        if process.poll() is not None:
            raise RuntimeError("localstripe exited at start")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        except OSError:
            return False
        return True

    wait_until(listening, "localstripe to listen", 20, every=0.05)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="localstripe on 127.0.0.1, store in memory")
    parser.add_argument("--port", type=int, default=8420)
    serve(parser.parse_args().port)


# Stripe's test cards, as localstripe knows them.
CARD_OK = "4242424242424242"
CARD_DECLINED_ON_SAVE = "4000000000000002"
CARD_DECLINED_ON_CHARGE = "4000000000000341"  # saves, then every charge is declined


def confirm_card_setup(stripe: LocalStripe, client_secret: str, number: str = CARD_OK) -> dict[str, Any]:
    """What Stripe.js's confirmCardSetup sends localstripe for a card typed into its card element."""
    setup_intent = client_secret.split("_secret_")[0]
    body = {
        "key": "pk_test_verifier",
        "use_stripe_sdk": True,
        "client_secret": client_secret,
        "payment_method_data": {
            "type": "card",
            "card": {"number": number, "exp_month": "12", "exp_year": "2034", "cvc": "123"},
            "billing_details": {"address": {"postal_code": "10001"}},
        },
    }
    request = urllib.request.Request(
        f"{stripe.url}/v1/setup_intents/{setup_intent}/confirm", data=json.dumps(body).encode(), method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return dict(json.load(response))
    except urllib.error.HTTPError as error:
        return dict(json.load(error))
