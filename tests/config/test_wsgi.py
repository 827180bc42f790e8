"""The WSGI entry point gunicorn's workers import as they start."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_web_worker_imports_the_views_as_it_starts_not_in_its_first_request() -> None:
    # A fresh interpreter, as a gunicorn worker is: the first upload after a start would otherwise
    # wait for every view's import.
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    probe = "import sys, config.wsgi; print('jobs.apis' in sys.modules, 'verification.apis' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True"]
