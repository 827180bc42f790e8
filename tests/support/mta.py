"""Real mail servers on loopback for the `mta` tests (tests/mta/README.md): Debian's Postfix (with
postscreen, and postgrey as its policy service) and Exim, each started once from the configuration
files in tests/mta/, rendered into a temporary directory with the suite's port and addresses.

`.ci/ensure-mtas` installs them (Exim unpacked into var/mta/exim, as it conflicts with Postfix in
apt). They need root, as a real MTA does. Absent outside CI, the tests skip; in CI they fail.
Each server writes its own log, where the tests count the sessions a verification opened.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Self

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.support.certs import key_pem, self_signed
from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "tests" / "mta"
POSTFIX = Path("/usr/sbin/postfix")
POSTGREY = Path("/usr/sbin/postgrey")
EXIM = ROOT / "var" / "mta" / "exim" / "usr" / "sbin" / "exim4"
# Every Postfix case's listener (tests/mta/postfix/master.cf) and Exim's: on the suite's one port.
POSTFIX_ADDRESSES = [f"127.0.3.{n}" for n in range(1, 14)]
EXIM_ADDRESS = "127.0.3.30"
# postgrey lets a (client, sender, recipient) through once this long has passed since it first saw it.
GREYLIST_DELAY = 2
STARTUP_SECONDS = 30.0
# The connections a 100-row deep job may open at the `rate-limit-job` listener (2 a minute), refused
# ones included: the first burst (at most VERIFIER_SMTP_MAX_CONNECTIONS_PER_HOST = 3 at once, shared
# by every process behind the egress: 2 taken, the third refused at the banner), then one try at a
# time spaced 1, 2, 4, 8, 16 and 32 s (docs/deep.md "Rate limits"): the sixth, 63 s on, falls in
# Postfix's next window and is taken (3 + 6 = 9). On a loaded machine that try can fall after the
# chunk's time (half its lease, 60 s): the chunk's deferred round then opens at most 3 more (12;
# seen: 10). Unpaced, every row's session would be one more refusal.
RATE_LIMITED_JOB_SESSIONS = 12


def require(*binaries: Path) -> None:
    """Skip when a server is not installed (`.ci/ensure-mtas` installs them) or we are not root;
    in CI (CI=true) fail instead: the matrix is the ground truth and must run."""
    missing = [str(binary) for binary in binaries if not os.access(binary, os.X_OK)]
    why = f"not installed: {', '.join(missing)} (run .ci/ensure-mtas)" if missing else ""
    if not why and os.geteuid() != 0:
        why = "real MTAs run as root"
    if why and os.environ.get("CI") == "true":
        pytest.fail(f"real MTAs {why}")
    if why:
        pytest.skip(f"real MTAs {why}")


def free_port(addresses: list[str]) -> int:
    """A port free on every one of `addresses` (each loopback address has ports of its own)."""
    while True:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        if all(_bindable(address, port) for address in addresses):
            return port


def _bindable(address: str, port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind((address, port))
        except OSError:
            return False
    return True


def render(template: Path, target: Path, **values: object) -> None:
    """A configuration file of tests/mta with its {{name}} placeholders filled in."""
    text = template.read_text(encoding="utf-8")
    for name, value in values.items():
        text = text.replace("{{" + name + "}}", str(value))
    if "{{" in text:
        raise ValueError(f"{template}: a placeholder is left unfilled")
    target.write_text(text, encoding="utf-8")


def owned_by(path: Path, user: str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    account = pwd.getpwnam(user)
    os.chown(path, account.pw_uid, account.pw_gid)
    return path


@dataclass(frozen=True)
class MtaLog:
    """A server's log file, where the tests count the sessions since a mark."""

    path: Path
    opened: str  # a regular expression with {case}: a line starting a session
    closed: str  # ... and one ending it

    def mark(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0

    def since(self, mark: int) -> list[str]:
        with self.path.open(encoding="utf-8", errors="replace") as log:
            log.seek(mark)
            return log.read().splitlines()

    def sessions(self, case: str, mark: int, timeout: float = 10.0, at_least: int = 0) -> int:
        """How many sessions the case's listener had since `mark`, once at least `at_least` of them
        are in the log and each there has ended. A server writes its log a moment after the client
        hangs up (Postfix through its postlogd), so a caller that knows sessions were opened says how
        many: an empty log would otherwise count as none, all ended (seen once in CI)."""
        opened, closed = (re.compile(pattern.format(case=re.escape(case))) for pattern in (self.opened, self.closed))

        def count(pattern: re.Pattern[str]) -> int:
            return sum(1 for line in self.since(mark) if pattern.search(line))

        def logged_and_ended() -> bool:
            began = count(opened)
            return began >= at_least and began == count(closed)

        wait_until(logged_and_ended, f"{at_least or 'the'} sessions of {case} to be logged and end", timeout)
        return count(opened)

    def lines(self, case: str, mark: int, text: str) -> list[str]:
        return [line for line in self.since(mark) if f"/{case}/" in line and text in line]

    def rcpts(self, case: str, mark: int) -> int:
        """The RCPT commands the case's sessions took since `mark` (Postfix's "disconnect from"
        line counts each command: "rcpt=1/2" is one accepted of two)."""
        total = 0
        for line in self.lines(case, mark, "disconnect from"):
            found = _RCPT_COUNT.search(line)
            total += int(found.group(1)) if found else 0
        return total


# postscreen hands a client that passed its tests to smtpd, which logs the session under the case's name.
POSTFIX_LOG = (r"postfix/{case}/smtpd\[\d+\]: connect from", r"postfix/{case}/smtpd\[\d+\]: disconnect from")
_RCPT_COUNT = re.compile(r" rcpt=(?:\d+/)?(\d+)")


class Server:
    """A server started in a temporary directory of its own (`with`), stopped and removed after."""

    log: MtaLog

    def __init__(self, port: int) -> None:
        self.port = port
        self.root = Path(tempfile.mkdtemp(prefix="verifier-mta-"))
        self.root.chmod(0o755)  # the servers' own users read their configuration and write their logs below it

    def __enter__(self) -> Self:
        try:
            self.start()
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.stop()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError


class Postfix(Server):
    """One Postfix instance with a listener per case on the port, and postgrey for the greylist case."""

    def __init__(self, port: int) -> None:
        super().__init__(port)
        self.conf = self.root / "conf"
        self.log = MtaLog(self.root / "maillog", *POSTFIX_LOG)
        self.pid = 0
        self.postgrey: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.conf.mkdir()
        (self.root / "queue").mkdir()
        postgrey_port = free_port(["127.0.0.1"])
        for template in (CONFIG / "postfix").iterdir():
            render(
                template,
                self.conf / template.name,
                root=self.root,
                conf=self.conf,
                port=self.port,
                postgrey=postgrey_port,
            )
        self._tls()
        owned_by(self.root / "data", "postfix")
        self._start_postgrey(postgrey_port)
        subprocess.run([str(POSTFIX), "-c", str(self.conf), "start"], check=True, capture_output=True)
        pid_file = self.root / "queue" / "pid" / "master.pid"
        wait_until(lambda: "daemon started" in _text(self.log.path), "Postfix to start", STARTUP_SECONDS)
        self.pid = int(pid_file.read_text().strip())

    def stop(self) -> None:
        if self.pid:
            _stop(self.pid)
        if self.postgrey is not None:
            self.postgrey.terminate()
            self.postgrey.wait(timeout=10)

    def _tls(self) -> None:
        """A self-signed certificate for the STARTTLS case, made now (none is kept in the repository)."""
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        tls = self.root / "tls"
        tls.mkdir()
        (tls / "cert.pem").write_bytes(self_signed(key, "mx.mtamatrix.net"))
        (tls / "key.pem").write_bytes(key_pem(key))
        (tls / "key.pem").chmod(0o600)

    def _start_postgrey(self, port: int) -> None:
        dbdir = owned_by(self.root / "postgrey", "postgrey")
        command = [str(POSTGREY), f"--inet=127.0.0.1:{port}", f"--delay={GREYLIST_DELAY}", f"--dbdir={dbdir}"]
        with (self.root / "postgrey.log").open("wb") as output:
            self.postgrey = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
        wait_until(lambda: _listening("127.0.0.1", port), "postgrey to listen", STARTUP_SECONDS)


EXIM_LOG = (r"SMTP connection from \[127\.0\.0\.\d+\]", r"SMTP connection from .* (closed by|lost)")


class Exim(Server):
    """One Exim daemon on EXIM_ADDRESS and the port, run with its own config (-C)."""

    def __init__(self, port: int) -> None:
        super().__init__(port)
        self.log = MtaLog(self.root / "log" / "mainlog", *EXIM_LOG)
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        config = self.root / "exim.conf"  # Exim reads a -C file only when root owns it
        render(CONFIG / "exim" / "exim.conf", config, root=self.root)
        for directory in ("spool", "log"):
            owned_by(self.root / directory, "Debian-exim")
        command = [str(EXIM), "-C", str(config), "-bdf", "-oX", f"{EXIM_ADDRESS}:{self.port}"]
        with (self.root / "exim.out").open("wb") as output:
            self.process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
        wait_until(lambda: "daemon started" in _text(self.log.path), "Exim to start", STARTUP_SECONDS)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


def _listening(address: str, port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex((address, port)) == 0


def _stop(pid: int) -> None:
    """SIGTERM to a daemon by its PID, then wait until it is gone (or a zombie nobody reaps)."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    wait_until(lambda: not _alive(pid), f"process {pid} to stop", 10.0)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"
