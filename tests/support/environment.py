"""Loaded with `-p` (pyproject.toml) before pytest-django reads the settings: what production
requires and the suite runs without (DEBUG is off in the tests, as in production)."""

from __future__ import annotations

import os

# Also inherited by the processes the suite starts (live stacks, `manage.py` with DEBUG off).
os.environ.setdefault("VERIFIER_ADDRESS_PEPPER", "test-only-address-pepper")
