"""How much of the throwaway domains two independent public lists agree on we flag.

    python -m bench.disposable_coverage LIST_A LIST_B

Each list: one domain a line, '#' comments. Prints the size of their consensus and the share of
it that verification.engine.disposable judges throwaway (by name: no DNS is asked).
"""

from __future__ import annotations

import sys
from pathlib import Path

from verification.engine.disposable import is_disposable


def read_domains(path: Path) -> set[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return {d for line in lines if (d := line.split("#", 1)[0].strip().lower()) and "." in d}


def coverage(first: set[str], second: set[str]) -> tuple[int, float]:
    consensus = first & second
    flagged = sum(is_disposable(domain) for domain in consensus)
    return len(consensus), flagged / len(consensus) if consensus else 0.0


def main(argv: list[str]) -> None:
    first, second = (read_domains(Path(arg)) for arg in argv)
    size, share = coverage(first, second)
    print(f"consensus of {argv[0]} and {argv[1]}: {size} domains, {share:.1%} judged throwaway")


if __name__ == "__main__":
    main(sys.argv[1:])
