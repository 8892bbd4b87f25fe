"""``keel serve`` on a port another program holds: one line saying so, and a non-zero exit."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from tests.integration.server import free_port

KEEL = Path(sys.executable).parent / "keel"


def test_a_port_in_use_is_told_in_one_line_with_how_to_pick_another(tmp_path: Path) -> None:
    port = free_port()
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", port))
        holder.listen()
        env = {**os.environ, "KEEL_DATABASE_URL": "memory", "KEEL_PORT": str(port)}
        result = subprocess.run(
            [KEEL, "serve"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
        )
    assert result.returncode != 0
    lines = (result.stdout + result.stderr).strip().splitlines()
    assert len(lines) == 1, lines
    assert f"port {port}" in lines[0] and "already in use" in lines[0]
    assert "KEEL_PORT" in lines[0] and "--port" in lines[0]
    assert "chat page is at" not in lines[0]
