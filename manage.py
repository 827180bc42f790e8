#!/usr/bin/env python
from __future__ import annotations

import os
import signal
import sys


def main() -> None:
    # A command a non-interactive shell starts in the background (`make run &` in a script) has SIGINT
    # ignored, and runserver kept listening through the SIGINT meant to stop it: handle it again.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as exc:
        # A setting to fix, said in one line: a traceback through Django's start-up hides it.
        sys.exit(f"ImproperlyConfigured: {exc}")


if __name__ == "__main__":
    main()
