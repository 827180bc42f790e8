"""The settings the type checker loads (pyproject.toml, django-stubs): production's, with a
placeholder for each secret production must be given, since `mypy` runs with DEBUG off and no
secrets in its environment. Nothing serves with these."""

import os

os.environ.setdefault("VERIFIER_ADDRESS_PEPPER", "type-checking-only")

from config.settings import *  # noqa: F403
