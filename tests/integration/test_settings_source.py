"""Every command reads the same settings: the environment, and a ``.env`` file where it runs.

And with no database named, every command opens the same SQLite file, in the user's data
directory, whatever folder it runs in; the hint it leaves names a command that runs.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

from tests.integration.server import free_port

KEEL = Path(sys.executable).parent / "keel"
ROOT = Path(__file__).resolve().parents[2]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KEEL_", "OPENAI_"))}
    env.pop("XDG_DATA_HOME", None)
    return {**env, "PATH": "/usr/bin:/bin", **extra}


def _chat(cwd: Path, lines: list[str], env: dict[str, str]) -> str:
    done = subprocess.run(
        [KEEL, "chat"],
        input="".join(f"{line}\n" for line in lines),
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_keel_serve_and_keel_chat_read_the_dot_env_where_they_run(tmp_path: Path) -> None:
    port = free_port()
    database = tmp_path / "from-dot-env.db"
    (tmp_path / ".env").write_text(f"KEEL_PORT={port}\nKEEL_DATABASE_URL=sqlite:///{database}\n")
    with socket.socket() as holder:  # the port .env names is taken: serve says it tried that one
        holder.bind(("127.0.0.1", port))
        holder.listen()
        served = subprocess.run(
            [KEEL, "serve"], cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=60
        )
    assert served.returncode != 0 and f"port {port}" in served.stdout + served.stderr
    assert "Created task: buy milk" in _chat(tmp_path, ["Add buy milk"], _env())
    assert database.is_file()
    # a variable set in the environment wins over the file
    elsewhere = tmp_path / "from-environment.db"
    _chat(tmp_path, ["Add eggs"], _env(KEEL_DATABASE_URL=f"sqlite:///{elsewhere}"))
    assert elsewhere.is_file()


def test_chat_finds_the_same_tasks_from_any_folder_and_names_a_command_that_runs(
    tmp_path: Path,
) -> None:
    env = _env(XDG_DATA_HOME=str(tmp_path / "data"), KEEL_ENV_FILE="")  # not the checkout's
    first = _chat(ROOT, ["Add buy milk"], env)
    cid = re.search(r"Conversation: ([0-9a-f-]{36})", first).group(1)  # type: ignore[union-attr]
    hint = re.search(r"Continue with: (.+) chat --conversation " + cid, first)
    assert hint is not None, first
    command = hint.group(1)
    assert command == str(KEEL.relative_to(ROOT)) if KEEL.is_relative_to(ROOT) else str(KEEL)
    elsewhere = tmp_path / "another-folder"
    elsewhere.mkdir()
    listed = _chat(elsewhere, ["What's on my list?"], env)
    assert "1. buy milk" in listed
    assert (tmp_path / "data" / "keel" / "keel.db").is_file()
    resumed = subprocess.run(
        [*command.split(), "chat", "--conversation", cid],
        input="/quit\n",
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert resumed.returncode == 0 and f"Conversation: {cid}" in resumed.stdout


def test_data_an_earlier_keel_kept_in_the_folder_is_pointed_out(tmp_path: Path) -> None:
    (tmp_path / ".keel").mkdir()
    (tmp_path / ".keel" / "keel.db").touch()
    done = subprocess.run(
        [KEEL, "chat"],
        input="/quit\n",
        capture_output=True,
        text=True,
        env=_env(XDG_DATA_HOME=str(tmp_path / "data")),
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "KEEL_DATABASE_URL=sqlite:///.keel/keel.db" in done.stderr
