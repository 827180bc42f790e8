"""How many of a public list's role local parts we judge role-based.

    python -m bench.role_coverage LIST

LIST: one local part a line, '#' comments (for instance mixmaxhq/role-based-email-addresses,
its strings one a line). Prints the share judged role-based (verification.engine.lists.is_role,
the matcher the verdict uses) and the ones that are not.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from verification.engine import lists


def read_locals(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return sorted({local for line in lines if (local := line.split("#", 1)[0].strip().lower())})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.role_coverage", description=__doc__.split("\n")[0])
    parser.add_argument("list", type=Path)
    local_parts = read_locals(parser.parse_args(argv).list)
    missed = [local for local in local_parts if not lists.is_role(local)]
    covered = 1 - len(missed) / len(local_parts) if local_parts else 0.0
    print(f"{len(local_parts):,} local parts, {covered:.1%} judged role-based; not: {' '.join(missed)}")


if __name__ == "__main__":
    main()
