"""A pause point for crash tests: ``KEEL_PAUSE_AT=<name>`` stops the process there.

Crash-recovery tests start keel as a child process with this variable set, wait for the
``KEEL_PAUSED <name>`` line on stderr, and kill the process with SIGKILL. Unset (always, outside
those tests) it does nothing.
"""

from __future__ import annotations

import os
import sys
import time

PAUSE_SECONDS = 600


def pause_point(name: str) -> None:
    """Block for good when ``KEEL_PAUSE_AT`` names this point."""
    if os.environ.get("KEEL_PAUSE_AT") != name:
        return
    sys.stderr.write(f"KEEL_PAUSED {name}\n")
    sys.stderr.flush()
    time.sleep(PAUSE_SECONDS)
