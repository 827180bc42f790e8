from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

from lib.wsgi import ChunkedBodies

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = ChunkedBodies(get_wsgi_application())
