"""`keel chat` driven as a real subprocess with piped stdin."""

import json
import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

KEEL = [sys.executable, "-c", "from keel.api.cli import app; app()"]


def chat(
    tmp_path: Path, lines: list[str], *args: str, **extra_env: str
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KEEL_DATABASE_URL": f"sqlite:///{tmp_path / 'keel.db'}", **extra_env}
    env.pop("OPENAI_API_KEY", None)
    return subprocess.run(
        [*KEEL, "chat", *args],
        input="".join(f"{line}\n" for line in lines),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )


def conversation_id(out: str) -> str:
    match = re.search(r"Conversation: ([0-9a-f-]{36})", out)
    assert match, out
    return match.group(1)


def test_the_done_when_session_and_reopening_it(tmp_path):
    first = chat(tmp_path, ["Add buy milk", "What's on my list?", "Delete task 1"])
    assert first.returncode == 0, first.stderr
    out = first.stdout
    assert "Created task: buy milk" in out
    assert "- [ ] 1. buy milk" in out
    assert "Are you sure you want to delete task 1? (yes/no)\nDelete task 1 - buy milk" in out
    cid = conversation_id(out)

    second = chat(tmp_path, ["/state", "yes", "Show all", "/quit"], "--conversation", cid)
    assert second.returncode == 0, second.stderr
    out = second.stdout
    assert conversation_id(out) == cid
    assert "pending confirmation: Are you sure you want to delete task 1? (yes/no)" in out
    assert "agent_state: tool_execution" in out
    assert "Deleted task 1: buy milk" in out
    assert "Your list is empty." in out


def test_verbose_shows_events_and_state_shows_the_plan(tmp_path):
    result = chat(tmp_path, ["Add buy milk", "Show all", "/state"], "--verbose")
    assert "· Created task 1: buy milk" in result.stdout
    assert "Starting new query (previous task completed)" in result.stdout
    assert "mission: Show all" in result.stdout
    assert "1. [done] List the tasks" in result.stdout


def test_another_users_conversation_is_not_found(tmp_path):
    cid = conversation_id(chat(tmp_path, ["Add buy milk"], "--user", "ann").stdout)
    result = chat(tmp_path, ["Show all"], "--conversation", cid, "--user", "bob")
    assert result.returncode == 1
    assert f"conversation {cid} not found" in result.stdout


def test_a_bad_conversation_id_is_a_clear_error(tmp_path):
    result = chat(tmp_path, [], "--conversation", "not-a-uuid")
    assert result.returncode == 1 and "conversation not-a-uuid not found" in result.stdout


def test_end_of_input_ends_cleanly_and_logs_only_previews(tmp_path):
    long = "Add " + "x" * 300
    result = chat(tmp_path, [long], "--log-level", "info", KEEL_LOG_FORMAT="json")
    assert result.returncode == 0
    assert "x" * 101 not in result.stderr
    lines = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    previews = [line["message_preview"] for line in lines if line.get("message_preview")]
    assert previews and all(p.startswith("Add xxx") and len(p) <= 100 for p in previews)
    assert "Bye." in result.stdout


def test_verbose_shows_a_topic_change_a_mission_reset_and_reset(tmp_path):
    lines = ["Add buy milk", "lets discuss the garden, add water the plants", "/reset", "/state"]
    result = chat(tmp_path, lines, "--verbose")
    out = result.stdout
    assert result.returncode == 0, result.stderr
    assert "New topic: Garden" in out
    assert "Starting new query (previous task completed)" in out
    assert "Created task: water the plants" in out
    assert "Mission reset (requested)" in out
    assert "Previous messages are preserved" in out
    assert "mission: None" in out


def test_quit_exit_and_bye_end_the_chat_and_are_no_tasks(tmp_path):
    for word in ["quit", "Exit", "bye!"]:
        result = chat(tmp_path, ["Add buy milk", word, "Add never this"])
        assert result.returncode == 0, result.stderr
        assert "Bye. Continue with:" in result.stdout
        assert "add quit" not in result.stdout.lower()
        assert "never this" not in result.stdout


def test_the_prompt_comes_before_keels_parts_load(tmp_path):
    """The command line's own module loads no graph, settings, model or migration code: `keel
    chat` shows its prompt, then loads them while the person types (bench/chat_start.py times it).
    """  # noqa: D205
    heavy = ("keel.graphs", "keel.api.terminal", "sqlalchemy", "alembic", "langchain_openai")
    code = f"import sys, keel.api.cli; print([m for m in sys.modules if m.startswith({heavy})])"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert loaded.returncode == 0 and loaded.stdout.strip() == "[]", loaded.stdout + loaded.stderr
    typed = chat(tmp_path, ["Add buy milk", "What's on my list?"])  # read while keel loads
    assert typed.stdout.startswith("New conversation  (user local; /state, /reset, /quit)\nyou> ")
    assert "Created task: buy milk" in typed.stdout and "- [ ] 1. buy milk" in typed.stdout


def test_a_chat_left_before_a_message_makes_no_conversation(tmp_path):
    import sqlite3

    for lines in ([], ["/state", "/quit"]):
        result = chat(tmp_path, lines)
        assert result.returncode == 0, result.stderr
        assert "Bye." in result.stdout and "--conversation" not in result.stdout
    with sqlite3.connect(tmp_path / "keel.db") as db:
        assert db.execute("SELECT count(*) FROM keel_conversations").fetchone() == (0,)
    said = chat(tmp_path, ["Add buy milk"])
    cid = conversation_id(said.stdout)
    assert f"--conversation {cid}" in said.stdout


def test_a_reminder_is_told_while_the_prompt_waits_and_on_the_next_start(tmp_path):
    env = {**os.environ, "KEEL_DATABASE_URL": f"sqlite:///{tmp_path / 'keel.db'}"}
    env.pop("OPENAI_API_KEY", None)
    process = subprocess.Popen(
        [*KEEL, "chat"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("remind me in 2 seconds to check the laundry\n")
    process.stdin.flush()
    seen = b""  # read from the pipe itself: a buffered reader would hide what it read ahead
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and "⏰ Reminder".encode() not in seen:
        if select.select([process.stdout], [], [], 1)[0]:  # the prompt waits; told meanwhile
            seen += os.read(process.stdout.fileno(), 65536)
    out, err = process.communicate("/quit\n", timeout=120)
    out = seen.decode() + out
    assert process.returncode == 0, err
    assert "Created task: check the laundry" in out
    told = out.split("Created task: check the laundry", 1)[1]
    assert told.count("⏰ Reminder: check the laundry (task 1).") == 1, out + err

    again = chat(tmp_path, ["/quit"])
    assert "Reminders said while you were away:" in again.stdout
    assert "⏰ Reminder: check the laundry (task 1). (in another conversation)" in again.stdout
