"""`keel serve` in a real terminal (a pty): one readable line a turn, no JSON.

A person who runs the server in a terminal reads what each turn did at a glance: when, the
conversation, what was said and answered, the tools called. ``KEEL_LOG_FORMAT=json`` and output
that is no terminal keep every line as JSON.
"""

from __future__ import annotations

import io
import os
import re
import sys
import time
from pathlib import Path

import httpx
import pexpect

from tests.integration.server import free_port

ROOT = Path(__file__).resolve().parents[2]
TURN = re.compile(r"^\d\d:\d\d:\d\d [0-9a-f]{8} ['\"].* -> ['\"]", re.M)


def ready(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def test_a_terminal_gets_one_line_a_turn(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "KEEL_DATABASE_URL": f"sqlite:///{tmp_path / 'keel.db'}", "TERM": "xterm"}
    for name in ("OPENAI_API_KEY", "KEEL_LOG_FORMAT", "KEEL_LOG_LEVEL"):
        env.pop(name, None)
    child = pexpect.spawn(
        sys.executable,
        ["-c", "from keel.api.cli import app; app()", "serve", "--port", str(port)],
        env=env,
        cwd=str(ROOT),
        dimensions=(30, 200),
        encoding="utf-8",
        timeout=90,
    )
    child.logfile_read = seen = io.StringIO()
    try:
        child.expect("the chat page is at")
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while not ready(url):
            assert time.monotonic() < deadline and child.isalive(), child.before
            child.expect([pexpect.TIMEOUT, r"\S"], timeout=0.5)
        with httpx.Client(base_url=url, timeout=60) as http:
            cid = http.post("/v1/conversations", json={}).json()["conversation_id"]
            for text in ["Add buy milk", "What's on my list?", "Delete task 1"]:
                said = http.post(f"/v1/conversations/{cid}/messages", json={"content": text})
                assert said.status_code == 200, said.text
        child.expect(r"'Delete task 1' -> 'Are you sure")
        child.sendintr()
        child.expect(pexpect.EOF, timeout=30)
    finally:
        child.close(force=True)
    shown = seen.getvalue().replace("\r", "")
    lines = [line for line in shown.splitlines() if line.strip()]
    turns = TURN.findall(shown)
    assert len(turns) == 3, shown
    assert "'Add buy milk' -> 'Created task: buy milk' · create_todo_task" in shown
    assert not any(line.lstrip().startswith("{") for line in lines), shown
    assert "turn_received" not in shown and "assistant_replied" not in shown
