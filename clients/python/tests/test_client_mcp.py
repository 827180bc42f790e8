"""`verifier mcp` (README.md beside the package, "MCP server"), driven by the `mcp` SDK's own client
over stdio, against a live service: the four tools listed and called, an API error as a tool error."""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.support.live_stack import LiveService

VERIFIER = str(Path(sys.executable).parent / "verifier")
# This tree's package first, whichever checkout the virtualenv's editable install points at.
SOURCE = {"PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}


def session_run(service: LiveService, work: Any, key: str = "test_api_key") -> Any:
    """Start `verifier mcp` as an assistant would (key and service in its environment) and run `work`."""
    env = {**os.environ, "VERIFIER_API_KEY": service.account[key], "VERIFIER_BASE_URL": service.base_url}

    async def main() -> Any:
        parameters = StdioServerParameters(command=VERIFIER, args=["mcp"], env=env)
        async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await work(session)

    return asyncio.run(asyncio.wait_for(main(), timeout=60))


def structured(result: Any) -> Any:
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


def test_the_server_lists_its_four_tools(service: LiveService) -> None:
    async def work(session: ClientSession) -> list[str]:
        return sorted(tool.name for tool in (await session.list_tools()).tools)

    assert session_run(service, work) == ["bulk_submit", "job_status", "verify_batch", "verify_email"]


def test_verify_email_and_verify_batch_answer_verdicts(service: LiveService) -> None:
    async def work(session: ClientSession) -> tuple[Any, Any]:
        one = await session.call_tool("verify_email", {"email": "invalid@sandbox.example"})
        many = await session.call_tool("verify_batch", {"emails": ["valid@sandbox.example", "role@sandbox.example"]})
        return structured(one), structured(many)

    one, many = session_run(service, work)
    assert (one["status"], one["sub_status"]) == ("invalid", "mailbox_not_found")
    assert [result["status"] for result in many["data"]] == ["valid", "risky"]


def test_a_bulk_job_is_submitted_and_followed(service: LiveService) -> None:
    async def work(session: ClientSession) -> Any:
        receipt = structured(await session.call_tool("bulk_submit", {"csv_text": "email\nvalid@sandbox.example\n"}))
        for _ in range(100):
            job = structured(await session.call_tool("job_status", {"job_id": receipt["id"]}))
            if job["status"] in ("completed", "failed"):
                return job
            await asyncio.sleep(0.2)
        return job

    job = session_run(service, work)
    assert (job["status"], job["progress"]["total"]) == ("completed", 1)


def test_an_api_refusal_is_the_tools_error(service: LiveService) -> None:
    async def work(session: ClientSession) -> Any:
        return await session.call_tool("job_status", {"job_id": "job_doesnotexist"})

    result = session_run(service, work)
    assert result.is_error
    assert "404 not_found" in result.content[0].text


def test_the_server_reports_the_clients_version_and_logs_no_request_lines(service: LiveService, tmp_path: Path) -> None:
    async def work(session: ClientSession) -> Any:
        await session.call_tool("verify_email", {"email": "valid@sandbox.example"})
        return session

    errors = tmp_path / "stderr.txt"
    env = {**os.environ, "VERIFIER_API_KEY": service.account["test_api_key"], "VERIFIER_BASE_URL": service.base_url}
    env.update(SOURCE)

    async def main() -> str:
        parameters = StdioServerParameters(command=VERIFIER, args=["mcp"], env=env)
        with errors.open("w") as stderr:
            async with stdio_client(parameters, errlog=stderr) as (read, write), ClientSession(read, write) as session:
                initialized = await session.initialize()
                await work(session)
                return str(initialized.server_info.version)

    version = asyncio.run(asyncio.wait_for(main(), timeout=60))
    assert version == importlib.metadata.version("email-verifier-client")
    assert "HTTP Request" not in errors.read_text() and "/v1/verify" not in errors.read_text()


def test_without_the_mcp_extra_the_command_says_how_to_install_it_instead_of_a_traceback() -> None:
    # `mcp` made unimportable, as in an install without the extra
    code = "import sys; sys.modules['mcp'] = None; from verifier.cli import main; sys.exit(main())"
    done = subprocess.run(
        [sys.executable, "-c", code, "mcp"],
        env={**os.environ, "VERIFIER_API_KEY": "ev_test_x", "VERIFIER_BASE_URL": "http://127.0.0.1:9", **SOURCE},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert 'pip install "email-verifier-client[mcp]"' in done.stderr
