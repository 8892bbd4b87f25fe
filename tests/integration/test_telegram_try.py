"""``make telegram-try``: the bot tried against the local Bot API server, typed to as a person."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.keel_process import ROOT, keel_env


def test_a_person_tries_the_bot_without_a_token(tmp_path: Path) -> None:
    typed = "Add buy milk\nDelete task 1\n[Maybe]\n[Yes]\nWhat's on my list?\n/quit\n"
    done = subprocess.run(
        [sys.executable, "-m", "tests.try_telegram"],
        input=typed,
        capture_output=True,
        text=True,
        env=keel_env(f"sqlite:///{tmp_path / 'keel.db'}"),
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    shown = done.stdout
    assert "keel: Created task: buy milk" in shown
    assert (
        "keel: Are you sure you want to delete task 1? (yes/no)\n"
        "      Delete task 1 - buy milk\n"
        "      [Yes] [No]"
    ) in shown
    assert "(no button [Maybe] under the bot's last question)" in shown
    assert "keel: Deleted task 1: buy milk" in shown
    assert "keel: Your list is empty." in shown
