"""Running the real `keel` command as a child process in tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KEEL = [sys.executable, "-c", "from keel.api.cli import app; app()"]


def keel_env(database_url: str, **extra: str) -> dict[str, str]:
    env = {**os.environ, "KEEL_DATABASE_URL": database_url, "PYTHONUNBUFFERED": "1", **extra}
    env.pop("OPENAI_API_KEY", None)
    env.pop("KEEL_PAUSE_AT", None) if "KEEL_PAUSE_AT" not in extra else None
    return env


def run_keel(database_url: str, args: list[str], stdin: str = "", **extra: str):
    return subprocess.run(
        [*KEEL, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=keel_env(database_url, **extra),
        timeout=180,
        cwd=ROOT,
    )


def start_keel(database_url: str, args: list[str], **extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*KEEL, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=keel_env(database_url, **extra),
        cwd=ROOT,
    )
