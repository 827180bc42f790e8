"""`verifier mcp` (README.md beside the package, "MCP server"), driven by the `mcp` SDK's own client
over stdio, against a live service: the four tools listed and called, an API error as a tool error."""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.live_stack import LiveService

# The SDK takes seconds to import: each xdist worker collects this module, one runs it (tests/conftest.py).
if TYPE_CHECKING:
    from mcp import ClientSession

# `python -m verifier`, with the package beside this suite first on the path: the server runs this
# checkout's code, whichever checkout (if any) the virtualenv's editable install points at.
SOURCE = str(Path(__file__).resolve().parents[1] / "src")


def session_run(
    service: LiveService, work: Any, key: str = "test_api_key", cwd: Path | None = None, **env_extra: str
) -> Any:
    """Start `verifier mcp` as an assistant would (key and service in its environment) and run `work`."""
    env = {**os.environ, "VERIFIER_API_KEY": service.account[key], "VERIFIER_BASE_URL": service.base_url}
    env |= {"PYTHONPATH": os.pathsep.join(filter(None, [SOURCE, os.environ.get("PYTHONPATH")])), **env_extra}

    async def main() -> Any:
        from mcp import ClientSession, StdioServerParameters, stdio_client

        parameters = StdioServerParameters(command=sys.executable, args=["-m", "verifier", "mcp"], env=env, cwd=cwd)
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


def call(service: LiveService, tool: str, arguments: dict[str, Any], **options: Any) -> Any:
    async def work(session: ClientSession) -> Any:
        return await session.call_tool(tool, arguments)

    return session_run(service, work, **options)


def error_text(result: Any) -> str:
    """The tool's error: the SDK puts "Error executing tool <name>: " before the server's own text."""
    assert result.is_error, result.content
    return str(result.content[0].text)


@pytest.mark.parametrize("job_id", ["../keys", "../account", "job_x/../../keys", "job_a?x=1", "%2e%2e/keys", ""])
def test_a_job_id_that_is_not_one_is_refused_before_any_request(service: LiveService, job_id: str) -> None:
    text = error_text(call(service, "job_status", {"job_id": job_id}, key="api_key"))
    assert "is not a job id" in text
    assert "ev_live_" not in text and "feedback" not in text


def test_bulk_submit_reads_a_file_under_the_servers_directory(service: LiveService, tmp_path: Path) -> None:
    (tmp_path / "list.csv").write_text("email\nvalid@sandbox.example\n")
    receipt = structured(call(service, "bulk_submit", {"file_path": "list.csv"}, cwd=tmp_path))
    assert receipt["id"].startswith("job_")


@pytest.mark.parametrize("where", ["absolute", "dotdot", "link"])
def test_bulk_submit_refuses_a_file_outside_the_servers_directory(
    service: LiveService, tmp_path: Path, where: str
) -> None:
    root, secret = tmp_path / "root", tmp_path / "secret.csv"
    root.mkdir()
    secret.write_text("email\nvalid@sandbox.example\n")
    (root / "innocent.csv").symlink_to(secret)
    path = {"absolute": str(secret), "dotdot": "../secret.csv", "link": "innocent.csv"}[where]
    text = error_text(call(service, "bulk_submit", {"file_path": path}, cwd=root))
    assert "outside" in text and "only under its directory" in text


def test_the_root_named_by_the_operator_is_the_one_read(service: LiveService, tmp_path: Path) -> None:
    (tmp_path / "list.csv").write_text("email\nvalid@sandbox.example\n")
    options = {"cwd": Path("/"), "VERIFIER_MCP_ROOT": str(tmp_path)}
    assert structured(call(service, "bulk_submit", {"file_path": "list.csv"}, **options))["id"].startswith("job_")
    assert "outside" in error_text(call(service, "bulk_submit", {"file_path": "/etc/hostname"}, **options))


def test_a_wrongly_typed_argument_is_the_tools_error(service: LiveService) -> None:
    text = error_text(call(service, "verify_email", {"email": "a@b.com", "validation_mode": "thorough"}))
    assert "validation_mode" in text


def test_a_refused_key_is_the_services_own_error(service: LiveService) -> None:
    text = error_text(call(service, "verify_email", {"email": "a@b.com"}, VERIFIER_API_KEY="ev_live_" + "x" * 32))
    assert text.startswith("Error executing tool verify_email: 401 invalid_api_key: ")


def test_an_unreachable_service_is_named_in_the_tools_error(service: LiveService) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}"
    text = error_text(call(service, "verify_email", {"email": "a@b.com"}, VERIFIER_BASE_URL=url, VERIFIER_RETRIES="0"))
    assert text.startswith(f"Error executing tool verify_email: the service at {url} could not be reached: ")


def test_a_service_that_never_answers_is_named_with_the_wait(service: LiveService) -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()  # accepts connections (the kernel's backlog) and never answers
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        options = {"VERIFIER_BASE_URL": url, "VERIFIER_RETRIES": "0", "VERIFIER_TIMEOUT": "1"}
        text = error_text(call(service, "verify_email", {"email": "a@b.com"}, **options))
    assert text == f"Error executing tool verify_email: the service at {url} did not answer in 1 s"


def test_the_server_reports_the_clients_version_and_logs_no_request_lines(service: LiveService, tmp_path: Path) -> None:
    async def work(session: ClientSession) -> Any:
        await session.call_tool("verify_email", {"email": "valid@sandbox.example"})
        return session

    errors = tmp_path / "stderr.txt"
    env = {**os.environ, "VERIFIER_API_KEY": service.account["test_api_key"], "VERIFIER_BASE_URL": service.base_url}
    env["PYTHONPATH"] = SOURCE

    async def main() -> str:
        from mcp import ClientSession, StdioServerParameters, stdio_client

        parameters = StdioServerParameters(command=sys.executable, args=["-m", "verifier", "mcp"], env=env)
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
        env={
            **os.environ,
            "VERIFIER_API_KEY": "ev_test_x",
            "VERIFIER_BASE_URL": "http://127.0.0.1:9",
            "PYTHONPATH": SOURCE,
        },
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert 'pip install "email-verifier-client[mcp]"' in done.stderr
