"""`verifier mcp`: the API as a Model Context Protocol server over stdio, so that an AI assistant
can verify addresses (README.md beside this package, "MCP server").

Four tools, on the official `mcp` SDK (installed with `pip install "email-verifier-client[mcp]"`):
`verify_email`, `verify_batch`, `bulk_submit`, `job_status`. The key and the service come from
VERIFIER_API_KEY and VERIFIER_BASE_URL, as for the CLI.

An assistant's arguments are untrusted (a prompt can steer them): each is typed and checked
before any request. A job id must look like one (`job_` and letters or digits: never a path that
would lead the request elsewhere, as `../keys` did); `bulk_submit` reads a file only under the
server's root (the directory it was started in, or `--root` / VERIFIER_MCP_ROOT), after following
symbolic links. Every failure is the tool's error result saying what happened: the service's own
status, code and message, or that the service could not be reached or did not answer in time.
"""

from __future__ import annotations

import importlib.metadata
import io
import logging
import os
import re
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Annotated, Any, Literal

import httpx
from pydantic import Field

from verifier.client import BATCH_LIMIT, Client, VerifierError

INSTRUCTIONS = (
    "Email verification: verify_email for one address (1 credit), verify_batch for up to 100 (1 credit per "
    "distinct address), bulk_submit for a CSV list (a job run in the background), job_status to follow a job. "
    "A verdict's status is valid, invalid, risky or unknown; did_you_mean suggests a fix for a typo."
)
JOB_ID = re.compile(r"job_[A-Za-z0-9]{1,64}")
Mode = Literal["fast", "deep"]
JobId = Annotated[str, Field(description="A job's id as bulk_submit answered it: job_ then letters and digits.")]


class ToolRefusal(Exception):
    """An argument the server will not act on; its text is the tool's error."""


def server(client: Client, root: Path | None = None) -> Any:
    """The MCP server, its tools calling the API through `client`; `bulk_submit` reads files under `root`
    (default: the current directory)."""
    from mcp.server.mcpserver import MCPServer

    files = (root or Path.cwd()).resolve()
    mcp = MCPServer("email-verifier", instructions=INSTRUCTIONS, version=client_version(), log_level="WARNING")

    @mcp.tool()
    @_tool_errors(client)
    def verify_email(email: str, validation_mode: Mode = "fast") -> dict[str, Any]:
        """Verify one email address: its status (valid, invalid, risky, unknown), sub_status, score 0-100,
        checks and did_you_mean. Costs one credit. validation_mode: fast (default) or deep."""
        return dict(client.verify(email, validation_mode=validation_mode))

    @mcp.tool()
    @_tool_errors(client)
    def verify_batch(
        emails: Annotated[list[str], Field(min_length=1, max_length=BATCH_LIMIT)], validation_mode: Mode = "fast"
    ) -> dict[str, Any]:
        """Verify up to 100 addresses at once, answered in order; one credit per distinct address."""
        return {"data": [dict(result) for result in client.verify_batch(emails, validation_mode=validation_mode)]}

    @mcp.tool()
    @_tool_errors(client)
    def bulk_submit(
        file_path: str | None = None, csv_text: str | None = None, validation_mode: Mode = "fast"
    ) -> dict[str, Any]:
        """Submit a list as a bulk job: the path of a CSV file under the server's directory, or the CSV's
        text (a header row with an email column, or one address a line). Returns the job's id; follow it
        with job_status."""
        if (file_path is None) == (csv_text is None):
            raise ToolRefusal("give either file_path or csv_text")
        upload: Any = within(files, file_path) if file_path is not None else io.BytesIO(str(csv_text).encode())
        return dict(client.bulk_submit(upload, validation_mode=validation_mode))

    @mcp.tool()
    @_tool_errors(client)
    def job_status(job_id: JobId) -> dict[str, Any]:
        """A bulk job's status (pending, processing, completed, failed), progress and breakdown of verdicts."""
        if not JOB_ID.fullmatch(job_id):
            raise ToolRefusal(f"{job_id!r} is not a job id: job_ then letters and digits, as bulk_submit answers")
        return dict(client.job(job_id))

    return mcp


def within(root: Path, file_path: str) -> Path:
    """`file_path` (relative to `root`, or absolute) as a regular file under `root`, links followed."""
    path = (root / file_path).resolve()
    if not path.is_relative_to(root):
        raise ToolRefusal(f"{file_path!r} is outside {root}: the server reads files only under its directory")
    if not path.is_file():
        raise ToolRefusal(f"{file_path!r} is not a file under {root}")
    return path


def _tool_errors(client: Client) -> Callable[[Callable[..., dict[str, Any]]], Callable[..., dict[str, Any]]]:
    """Every failure as the tool's error, for the assistant to read: the service's status, code and
    message; that it could not be reached or did not answer in time; or why an argument was refused."""

    def decorate(tool: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        @wraps(tool)
        def wrapped(*args: Any, **kwargs: Any) -> dict[str, Any]:
            from mcp.server.mcpserver.exceptions import ToolError

            try:
                return tool(*args, **kwargs)
            except VerifierError as error:
                raise ToolError(f"{error.status} {error.code}: {error.message}") from None
            except httpx.TimeoutException:
                raise ToolError(f"the service at {client.base_url} did not answer in {client.timeout:g} s") from None
            except httpx.TransportError as error:
                detail = str(error) or type(error).__name__
                raise ToolError(f"the service at {client.base_url} could not be reached: {detail}") from None
            except (ToolRefusal, ValueError, OSError) as error:
                raise ToolError(str(error)) from None

        return wrapped

    return decorate


MISSING_SDK = (
    "verifier mcp needs the MCP SDK, an extra of this package: "
    'pip install "email-verifier-client[mcp]" (from the service\'s repository: pip install "./clients/python[mcp]")'
)


def client_version() -> str:
    try:
        return importlib.metadata.version("email-verifier-client")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree, not installed
        return "0+unknown"


def serve(client: Client, root: Path | None = None) -> None:
    """Serve over stdio until the client closes the stream; files for bulk_submit under `root`, else
    VERIFIER_MCP_ROOT, else the current directory. Every API call's request line stays off stderr
    (httpx logs them at INFO): an assistant shows that stream as the server's errors."""
    try:
        import mcp  # noqa: F401  (the extra)
    except ImportError:
        raise SystemExit(MISSING_SDK) from None
    logging.getLogger("httpx").setLevel(logging.WARNING)
    chosen = root or (Path(os.environ["VERIFIER_MCP_ROOT"]) if os.environ.get("VERIFIER_MCP_ROOT") else None)
    server(client, chosen).run("stdio")
