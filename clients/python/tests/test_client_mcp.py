"""`verifier mcp` (README.md beside the package, "MCP server"), driven by the `mcp` SDK's own client
over stdio, against a live service: the four tools listed and called, an API error as a tool error."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.support.live_stack import LiveService

VERIFIER = str(Path(sys.executable).parent / "verifier")


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
