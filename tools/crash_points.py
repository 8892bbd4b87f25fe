"""A pause point for crash tests: ``KEEL_PAUSE_AT=<name>`` (the setting ``pause_at``) stops there.

Crash-recovery tests start keel as a child process with this variable set, wait for the
``KEEL_PAUSED <name>`` line on stderr, and kill the process with SIGKILL. Unset (always, outside
those tests) it does nothing.
"""

from __future__ import annotations

import sys
import time

PAUSE_SECONDS = 600


def pause_point(name: str, pause_at: str | None) -> None:
    """Block for good when ``pause_at`` (the ``KEEL_PAUSE_AT`` setting) names this point."""
    if pause_at != name:
        return
    sys.stderr.write(f"KEEL_PAUSED {name}\n")
    sys.stderr.flush()
    time.sleep(PAUSE_SECONDS)
