"""Try keel's Telegram bot on this machine, with no bot token: ``make telegram-try``.

Starts the local Bot API server the tests use (``tests/stub_telegram.py``) and ``keel telegram``
pointed at it; then you write as a Telegram user would. Each line typed is a message to the bot,
and what the bot sends back is printed with its buttons, as it comes (a reminder, between lines);
``[Yes]`` presses the button labelled "Yes" under the bot's newest message that has buttons.
``/quit`` or Ctrl-D ends it. Nothing of the try is kept: the bot runs on a database of its own,
removed at the end, for the Telegram user 1001.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

from tests.stub_telegram import StubTelegram

USER = 1001
ANSWER_SECONDS = 120
"""How long to wait for the bot's first answer (a local model on a CPU can be slow)."""
QUIET_SECONDS = 1.0
"""After the bot's first answer, how long to wait for more before asking for the next line."""


def _shown(message: dict[str, Any]) -> str:
    buttons = " ".join(f"[{label}]" for row in message["buttons"] for label, _ in row)
    text = message["text"].replace("\n", "\n      ")
    return f"keel: {text}" + (f"\n      {buttons}" if buttons else "")


class Printer:
    """Prints each message the bot sends, as it comes: answers, and reminders between lines."""

    def __init__(self, stub: StubTelegram) -> None:
        self.stub, self.printed, self.lock = stub, 0, threading.Lock()
        threading.Thread(target=self._watch, name="keel-try-printer", daemon=True).start()

    def _watch(self) -> None:
        while True:
            time.sleep(0.5)
            self.flush(prompt=True)

    def flush(self, prompt: bool = False) -> None:
        """Print what the bot sent since the last print (above a new prompt, between lines)."""
        with self.lock:
            new = self.stub.replies(USER)[self.printed :]
            self.printed += len(new)
        if new and prompt:
            print(flush=True)
        for message in new:
            print(_shown(message), flush=True)
        if new and prompt and sys.stdin.isatty():
            print("you> ", end="", flush=True)

    def wait_for_answer(self, seen: int) -> bool:
        """Print the answer to a line (waited for, then what follows it); False: none came."""
        answered = bool(_answers(self.stub, seen))
        self.flush()
        return answered


def _answers(stub: StubTelegram, seen: int) -> list[dict[str, Any]]:
    """The bot's messages after the first ``seen``: the first waited for, then any that follow."""
    try:
        stub.next_reply(USER, seen, seconds=ANSWER_SECONDS)
    except AssertionError:  # the stub's "not in time"
        return []
    while True:
        count = len(stub.replies(USER))
        time.sleep(QUIET_SECONDS)
        if len(stub.replies(USER)) == count:
            return stub.replies(USER)[seen:]


def _press(stub: StubTelegram, label: str) -> bool:
    """Press ``label`` under the newest message with buttons; False when there is none such."""
    for message in reversed(stub.replies(USER)):
        labels = [text for row in message["buttons"] for text, _ in row]
        if labels:
            if label not in labels:
                return False
            stub.press(USER, message, label)
            return True
    return False


def main() -> int:
    """Run the bot against the local server and pass lines between it and the terminal."""
    with (
        StubTelegram() as stub,
        tempfile.TemporaryDirectory() as scratch,
        tempfile.NamedTemporaryFile("w+", suffix=".log") as log,
    ):
        env = {
            **os.environ,
            "KEEL_TELEGRAM_TOKEN": stub.token,
            "KEEL_TELEGRAM_API_URL": stub.url,
            "KEEL_TELEGRAM_ALLOWED_USERS": str(USER),
            "KEEL_DATABASE_URL": f"sqlite:///{scratch}/keel.db",
        }
        bot = subprocess.Popen(
            [sys.executable, "-c", "from keel.api.cli import app; app()", "telegram"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            print("Write to the bot as a Telegram user (try /start, Add buy milk, Delete task 1,")
            print("remind me in 1 minute to stretch); [Yes] presses the button so labelled (also")
            print("[Done], [Snooze 10 min] under a reminder), /quit ends.", flush=True)
            printer = Printer(stub)
            while True:
                try:
                    line = input("you> " if sys.stdin.isatty() else "")
                except EOFError:
                    break
                if bot.poll() is not None:
                    log.seek(0)
                    print(f"keel telegram stopped:\n{log.read()[-2000:]}", file=sys.stderr)
                    return 1
                text = line.strip()
                if not text:
                    continue
                if text == "/quit":
                    break
                printer.flush()
                seen = len(stub.replies(USER))
                if text.startswith("[") and text.endswith("]"):
                    if not _press(stub, text[1:-1]):
                        print(f"(no button {text} under the bot's last question)", flush=True)
                        continue
                else:
                    stub.say(USER, text)
                if not printer.wait_for_answer(seen):
                    print(f"(no answer in {ANSWER_SECONDS} s; type another line)", flush=True)
        finally:
            bot.terminate()
            bot.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
