"""`verifier mcp`: the API as a Model Context Protocol server over stdio, so that an AI assistant
can verify addresses (README.md beside this package, "MCP server").

Four tools, on the official `mcp` SDK (installed with `pip install "email-verifier-client[mcp]"`):
`verify_email`, `verify_batch`, `bulk_submit`, `job_status`. The key and the service come from
VERIFIER_API_KEY and VERIFIER_BASE_URL, as for the CLI. An API error becomes the tool's error
result, with the error's code and message.
"""

from __future__ import annotations

import importlib.metadata
import io
import logging
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any

from verifier.client import Client, VerifierError

INSTRUCTIONS = (
    "Email verification: verify_email for one address (1 credit), verify_batch for up to 100 (1 credit per "
    "distinct address), bulk_submit for a CSV list (a job run in the background), job_status to follow a job. "
    "A verdict's status is valid, invalid, risky or unknown; did_you_mean suggests a fix for a typo."
)


def server(client: Client) -> Any:
    """The MCP server, its tools calling the API through `client`."""
    from mcp.server.mcpserver import MCPServer

    mcp = MCPServer("email-verifier", instructions=INSTRUCTIONS, version=client_version(), log_level="WARNING")

    @mcp.tool()
    @_api_errors
    def verify_email(email: str, validation_mode: str = "fast") -> dict[str, Any]:
        """Verify one email address: its status (valid, invalid, risky, unknown), sub_status, score 0-100,
        checks and did_you_mean. Costs one credit. validation_mode: fast (default) or deep."""
        return dict(client.verify(email, validation_mode=validation_mode))

    @mcp.tool()
    @_api_errors
    def verify_batch(emails: list[str], validation_mode: str = "fast") -> dict[str, Any]:
        """Verify up to 100 addresses at once, answered in order; one credit per distinct address."""
        return {"data": [dict(result) for result in client.verify_batch(emails, validation_mode=validation_mode)]}

    @mcp.tool()
    @_api_errors
    def bulk_submit(
        file_path: str | None = None, csv_text: str | None = None, validation_mode: str = "fast"
    ) -> dict[str, Any]:
        """Submit a list as a bulk job: a CSV file's path on this machine, or the CSV's text (a header row
        with an email column, or one address a line). Returns the job's id; follow it with job_status."""
        if (file_path is None) == (csv_text is None):
            raise ValueError("give either file_path or csv_text")
        upload: Any = Path(file_path) if file_path is not None else io.BytesIO(str(csv_text).encode())
        return dict(client.bulk_submit(upload, validation_mode=validation_mode))

    @mcp.tool()
    @_api_errors
    def job_status(job_id: str) -> dict[str, Any]:
        """A bulk job's status (pending, processing, completed, failed), progress and breakdown of verdicts."""
        return dict(client.job(job_id))

    return mcp


def _api_errors(tool: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """An API refusal (or a wrong argument) as the tool's error, for the assistant to read: the status,
    code and message. Any other exception stays a crash, its text kept on the server."""

    @wraps(tool)
    def wrapped(*args: Any, **kwargs: Any) -> dict[str, Any]:
        from mcp.server.mcpserver.exceptions import ToolError

        try:
            return tool(*args, **kwargs)
        except VerifierError as error:
            raise ToolError(f"{error.status} {error.code}: {error.message}") from None
        except (ValueError, OSError) as error:
            raise ToolError(str(error)) from None

    return wrapped


MISSING_SDK = (
    "verifier mcp needs the MCP SDK, an extra of this package: "
    'pip install "email-verifier-client[mcp]" (from the service\'s repository: pip install "./clients/python[mcp]")'
)


def client_version() -> str:
    try:
        return importlib.metadata.version("email-verifier-client")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree, not installed
        return "0+unknown"


def serve(client: Client) -> None:
    """Serve over stdio until the client closes the stream. Every API call's request line stays off
    stderr (httpx logs them at INFO): an assistant shows that stream as the server's errors."""
    try:
        import mcp  # noqa: F401  (the extra)
    except ImportError:
        raise SystemExit(MISSING_SDK) from None
    logging.getLogger("httpx").setLevel(logging.WARNING)
    server(client).run("stdio")
