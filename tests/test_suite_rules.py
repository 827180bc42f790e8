"""The suite's own house rules, checked rather than remembered: a test module imports no other test
module (shared helpers live in tests/support/ or the app's conftest.py), no module of the suite
grows past 400 lines, and nothing waits a fixed time (tests/support/waiting.py waits for conditions).

import-linter cannot say the first (its wildcards stand for whole module names, not `test_*`)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
MAX_LINES = 400
POLLER = TESTS / "support" / "waiting.py"
# A sleep that stands for a server's latency or work is marked so on its line; anything else is a wait.
NOT_A_WAIT = "# not a wait:"
OWED: dict[str, list[str]] = {}  # fixed waits still owed a condition: none


def modules() -> list[Path]:
    return sorted(path for path in TESTS.rglob("*.py") if "__pycache__" not in path.parts)


def is_test_module(name: str) -> bool:
    return name.startswith("tests.") and name.rsplit(".", 1)[-1].startswith("test_")


def imported(source: str) -> set[str]:
    """Every module the source names in an import, `from tests.x import test_y` as tests.x.test_y."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def fixed_sleeps(source: str) -> list[str]:
    return [line.strip() for line in source.splitlines() if re.search(r"\bsleep\(", line) and NOT_A_WAIT not in line]


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_no_test_module_imports_another() -> None:
    reaching = {
        str(path.relative_to(TESTS.parent)): sorted(filter(is_test_module, imported(text(path)))) for path in modules()
    }
    assert {path: names for path, names in reaching.items() if names} == {}


def test_no_module_of_the_suite_is_over_400_lines() -> None:
    sizes = {str(path.relative_to(TESTS.parent)): len(text(path).splitlines()) for path in modules()}
    assert {path: lines for path, lines in sizes.items() if lines > MAX_LINES} == {}


def test_nothing_in_the_suite_sleeps_a_fixed_time() -> None:
    checked = [path for path in modules() if path not in (POLLER, Path(__file__).resolve())]
    sleeps = {str(path.relative_to(TESTS.parent)): fixed_sleeps(text(path)) for path in checked}
    assert {path: lines for path, lines in sleeps.items() if lines} == OWED


def test_the_rules_see_what_they_look_for() -> None:
    """Each check finds its kind of breach, so the empty answers above mean something."""
    sample = (
        "from tests.portal import test_browser\nfrom tests.support.browser import snap\nimport tests.jobs.test_e2e\n"
    )
    assert sorted(filter(is_test_module, imported(sample))) == ["tests.jobs.test_e2e", "tests.portal.test_browser"]
    sample = f"time.sleep(1.2)\nawait asyncio.sleep(0.05)  {NOT_A_WAIT} latency\nwait_until(done, 'x', 5)\n"
    assert fixed_sleeps(sample) == ["time.sleep(1.2)"]
