"""A line typed at ``keel chat``'s prompt, read in a thread: keel goes on while the person types.

Light on purpose: ``keel chat`` shows its first prompt with it before keel's parts are loaded.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future

from rich.console import Console


def line_in_thread(console: Console) -> Future[str]:
    """The next line typed, read in a thread (keel goes on meanwhile): the line, or the EOFError
    of an input that ended.
    """  # noqa: D205
    line: Future[str] = Future()

    def read() -> None:
        try:
            line.set_result(console.input("[bold]you>[/bold] "))
        except (EOFError, OSError, ValueError) as exc:
            line.set_exception(exc if isinstance(exc, EOFError) else EOFError(str(exc)))

    threading.Thread(target=read, name="keel-chat-line", daemon=True).start()
    return line
