"""The name of the ``keel`` command as a person can type it, for the hints keel prints.

A checkout's command is ``.venv/bin/keel``, not on the PATH, so a hint saying ``keel chat ...``
would fail with "command not found"; ``invoked_as`` names the command this process was started as.
Used by ``keel chat``'s goodbye and ``keel serve``'s busy-port message.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path


def invoked_as() -> str:
    """The ``keel`` command as this process was started, so that a hint names one that runs:
    ``keel`` when that is on the PATH, else its path (``.venv/bin/keel`` from the checkout).
    """  # noqa: D205
    started = Path(sys.argv[0])
    if started.name != "keel" or not started.is_file():
        return "keel"
    found = shutil.which("keel")
    if found is not None and Path(found).resolve() == started.resolve():
        return "keel"
    where = started.absolute()
    if where.is_relative_to(Path.cwd()):  # .venv/bin/keel, ./keel: a path, not a name to look up
        relative = str(where.relative_to(Path.cwd()))
        return shlex.quote(relative if "/" in relative else f"./{relative}")
    return shlex.quote(str(where))
