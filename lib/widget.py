"""The form widget's script (static/widget/verifier-form.js) as it is served: its bytes, its version
and its Subresource Integrity value, and the snippet that loads it (docs/widget.md)."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from django.conf import settings
from django.urls import reverse

SCRIPT = Path("static") / "widget" / "verifier-form.js"


@dataclass(frozen=True, slots=True)
class Script:
    body: bytes
    version: str  # the first 12 hex digits of its SHA-256: the versioned file's name
    integrity: str  # the SRI value: sha384-<base64>


@cache
def widget_script() -> Script:
    body = (Path(settings.BASE_DIR) / SCRIPT).read_bytes()
    digest = base64.b64encode(hashlib.sha384(body).digest()).decode()
    return Script(body=body, version=hashlib.sha256(body).hexdigest()[:12], integrity=f"sha384-{digest}")


def snippet(request: Any, key: str) -> str:
    """The one tag a customer pastes: the versioned script, pinned by its integrity."""
    script = widget_script()
    src = request.build_absolute_uri(reverse("widget-versioned", args=[script.version]))
    return (
        f'<script src="{src}" integrity="{script.integrity}" crossorigin="anonymous" data-key="{key}" defer></script>'
    )
