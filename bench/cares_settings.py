"""Settings for bench/resolvers.py's c-ares stacks: the service's settings, its resolver swapped.

Settings load before any app module, so `verification.resolver` (the service's resolver, built on
`verification.engine.BatchResolver`) is built on the bench's c-ares adapter instead.
"""

import verification.engine
from bench.cares_resolver import CaresResolver
from config.settings import *  # noqa: F403

verification.engine.BatchResolver = CaresResolver  # type: ignore[misc]
