"""Settings for the ``single`` scenario only: the service's settings plus the bench URLs (the floor endpoint)."""

from config.settings import *  # noqa: F403

ROOT_URLCONF = "bench.urls"
