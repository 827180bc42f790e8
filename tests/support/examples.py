"""How many examples a property test draws: its full count by default (`make test-all`, CI, a plain
`pytest`), and a third of it under the `quick` profile `make test` loads
(`--hypothesis-profile=quick`), so the everyday suite keeps every property but spends less on
each. CI's runs are the thorough ones."""

from __future__ import annotations

from hypothesis import settings

QUICK = "quick"
FULL_MAX_EXAMPLES = 100  # Hypothesis's own default, the base the counts below are scaled from
settings.register_profile(QUICK, max_examples=FULL_MAX_EXAMPLES * 3 // 10)


def examples(full: int) -> int:
    """`full` under the default profile, scaled down with the loaded profile's max_examples."""
    return max(10, full * settings.default.max_examples // FULL_MAX_EXAMPLES)
