"""CPU priority of this process (Unix niceness)."""

from __future__ import annotations

import os


def lower_priority(niceness: int) -> None:
    """Run at `niceness` or nicer from now on; never raises a priority (0 leaves it as it is).

    Bulk workers call it so the interactive requests on the same cores go first.
    """
    if niceness > 0 and os.getpriority(os.PRIO_PROCESS, 0) < niceness:
        os.setpriority(os.PRIO_PROCESS, 0, niceness)
