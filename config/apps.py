"""The project's own apps, floor by floor from the top: the one list that INSTALLED_APPS
(config/settings.py) and the import rules (config/import_rules.py) are both made from, so an app
cannot be installed and left out of the rules, or the reverse.

An app imports only from the floors below its own; apps on one floor import neither the other.
`lib` is the ground floor: plain helpers, not a Django app.
"""

from __future__ import annotations

FLOORS: tuple[tuple[str, ...], ...] = (
    ("portal", "ops"),
    ("privacy",),
    ("jobs",),
    ("verification",),
    ("billing",),
    ("feedback",),
    ("apikit",),
    ("accounts",),
    ("lib",),
)
# Not Django apps: nothing to install.
PLAIN_PACKAGES = frozenset({"lib"})
# Every package of ours, from the top floor down.
PACKAGES: tuple[str, ...] = tuple(package for floor in FLOORS for package in floor)
# The Django apps, from the ground up: an app's templates, commands and signals come after those it builds on.
DJANGO_APPS: tuple[str, ...] = tuple(app for app in reversed(PACKAGES) if app not in PLAIN_PACKAGES)
