"""The shell examples of the README and docs/bulk.md, as the docs tests read them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = ["README.md", "docs/bulk.md"]
DOCUMENTED_BASE = "http://localhost:8000"
ILLUSTRATION = "# illustration"
SHELL_BLOCK = re.compile(r"^```(?:sh|bash|shell)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
CURL_CALL = re.compile(r"(?:^|[\s;|&(])curl\s")


@dataclass(frozen=True)
class Example:
    document: str
    line: int
    commands: tuple[str, ...]  # to run
    illustrations: int  # shown, not run

    @property
    def curl_calls(self) -> int:
        return sum(len(CURL_CALL.findall(command)) for command in self.commands)


def shell_commands(block: str) -> Iterator[tuple[str, bool]]:
    """The block's commands (continuation lines joined), each with whether it is an illustration."""
    lines, illustration = iter(block.splitlines()), False
    for line in lines:
        if line.lstrip().startswith("#") or not line.strip():
            illustration = illustration or line.lstrip().startswith(ILLUSTRATION)
            continue
        command = [line]
        while command[-1].rstrip().endswith("\\"):
            command.append(next(lines))
        yield "\n".join(command), illustration
        illustration = False


def examples(document: str) -> list[Example]:
    text = (ROOT / document).read_text()
    found = []
    for match in SHELL_BLOCK.finditer(text):
        if not CURL_CALL.search(match.group(1)):
            continue
        commands = list(shell_commands(match.group(1)))
        runnable = tuple(command for command, illustration in commands if not illustration)
        line = text.count("\n", 0, match.start()) + 1
        found.append(Example(document, line, runnable, len(commands) - len(runnable)))
    return found


ALL_EXAMPLES = [example for document in DOCUMENTS for example in examples(document)]
