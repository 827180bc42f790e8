"""How many examples a property test draws: its full count by default (`make test-all`, CI, a plain
`pytest`), and a third of it under the `quick` profile `make test` loads
(`--hypothesis-profile=quick`), so the everyday suite keeps every property but spends less on
each. CI's runs are the thorough ones.

Both profiles keep no deadline and no "generation is slow" health check: on a shared, loaded
machine those fail a property for the machine's load, not for the code."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

QUICK = "quick"
FULL_MAX_EXAMPLES = 100  # Hypothesis's own default, the base the counts below are scaled from
LOAD_INDEPENDENT = "load-independent"
settings.register_profile(LOAD_INDEPENDENT, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(LOAD_INDEPENDENT)
settings.register_profile(
    QUICK, parent=settings.get_profile(LOAD_INDEPENDENT), max_examples=FULL_MAX_EXAMPLES * 3 // 10
)


def examples(full: int) -> int:
    """`full` under the default profile, scaled down with the loaded profile's max_examples."""
    return max(10, full * settings.default.max_examples // FULL_MAX_EXAMPLES)
