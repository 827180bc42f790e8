from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

from lib.wsgi import ChunkedBodies

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = ChunkedBodies(get_wsgi_application())
# The URL configuration, and with it every view, is imported as a worker starts rather than in the
# first request it serves (Django's default): otherwise the first upload or verification after a
# start or a worker's recycling waits ~0.2 s for the imports.
get_resolver().url_patterns  # noqa: B018
