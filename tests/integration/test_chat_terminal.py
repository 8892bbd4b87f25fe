"""`keel chat` in a real terminal (a pty): its keys and how its replies fit the terminal.

Ctrl-C at the prompt ends the session at once (nothing more to type), so does Ctrl-D; during a
running turn the first Ctrl-C stops the turn and the session goes on; a reply
longer than the terminal is wide breaks between words; what the tools did reads as sentences.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

import pexpect

from tests.stub_openai import StubOpenAI

ROOT = Path(__file__).resolve().parents[2]
PROMPT = r"you>(?:\x1b\[0m)? "


def spawn(tmp_path: Path, columns: int = 100, **extra: str) -> pexpect.spawn:
    env = {
        **os.environ,
        "KEEL_DATABASE_URL": f"sqlite:///{tmp_path / 'keel.db'}",
        "TERM": "xterm",
        **extra,
    }
    env.pop("OPENAI_API_KEY", None)
    child = pexpect.spawn(
        sys.executable,
        ["-c", "from keel.api.cli import app; app()", "chat"],
        env=env,
        cwd=str(ROOT),
        dimensions=(30, columns),
        encoding="utf-8",
        timeout=60,
    )
    child.expect(PROMPT)
    return child


def test_ctrl_c_at_the_prompt_ends_the_session_at_once(tmp_path: Path) -> None:
    child = spawn(tmp_path)
    child.send("half a line")
    child.sendintr()
    child.expect("Bye", timeout=10)  # no Enter needed
    child.expect(pexpect.EOF, timeout=10)
    child.close()
    assert child.exitstatus == 0


def test_ctrl_d_at_the_prompt_ends_the_session(tmp_path: Path) -> None:
    child = spawn(tmp_path)
    child.sendeof()
    child.expect("Bye", timeout=10)
    child.expect(pexpect.EOF, timeout=10)
    child.close()
    assert child.exitstatus == 0


def test_replies_wrap_between_words_and_tools_speak_in_sentences(tmp_path: Path) -> None:
    child = spawn(tmp_path, columns=40)
    words = "call the plumber about the leaking kitchen sink before the weekend visitors"
    child.sendline(f"Add {words}")
    child.expect(PROMPT)
    out = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", child.before).replace("\r", "")
    child.sendintr()
    child.expect(pexpect.EOF, timeout=10)
    assert "Created task 1: call the plumber" in out.replace("\n", " ")
    assert "{'title'" not in out and "create_todo_task(" not in out
    reply = out[out.index("keel>") :]
    lines = [line.rstrip() for line in reply.split("\n") if line.strip()]
    assert len(lines) > 1, reply  # it did not fit on one line
    for line in lines:
        assert len(line) <= 40, line
        assert line.split()[-1] in f"keel> Created task: {words}".split(), line  # whole words


def test_ctrl_c_during_a_turn_stops_the_turn_and_the_session_goes_on(tmp_path: Path) -> None:
    with StubOpenAI() as stub:
        stub.reply("Chores")  # the topic's title
        stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": "sweep the porch"}}])
        stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": "wash the car"}}])
        stub.delays[2] = 4.0  # slow to ask for the second task: time to press Ctrl-C
        child = spawn(tmp_path, KEEL_OPENAI_API_KEY="test-key", KEEL_OPENAI_BASE_URL=stub.base_url)
        child.sendline("Two chores")
        deadline = time.monotonic() + 30
        while len(stub.requests) < 3 and time.monotonic() < deadline:  # the slow call began
            time.sleep(0.05)
        child.sendintr()
        child.expect("Stopping")
        child.expect("Created task 1: sweep the porch")
        child.expect("Stopped at your request")
        child.expect(PROMPT)  # the session goes on
        child.sendintr()
        child.expect(pexpect.EOF, timeout=10)
        child.close()
    assert child.exitstatus == 0
    assert len([r for r in stub.requests if "tools" in r]) <= 3  # no call for the car ran


def test_a_rename_is_asked_with_both_titles_and_the_goodbye_names_a_command_that_runs(
    tmp_path: Path,
) -> None:
    keel = Path(sys.executable).parent / "keel"
    env = {**os.environ, "KEEL_DATABASE_URL": f"sqlite:///{tmp_path / 'keel.db'}", "TERM": "xterm"}
    env.pop("OPENAI_API_KEY", None)
    child = pexpect.spawn(
        str(keel), ["chat"], env=env, cwd=str(ROOT), dimensions=(30, 100), encoding="utf-8"
    )
    child.expect(PROMPT, timeout=60)
    child.sendline("Add buy milk")
    child.expect(PROMPT, timeout=60)
    child.sendline("Rename task 1 to oat milk")
    child.expect("Rename task 1: buy milk -> oat milk", timeout=60)
    child.expect(PROMPT, timeout=60)
    child.sendeof()
    child.expect(r"Continue with: (\S+) chat --conversation ([0-9a-f-]{36})", timeout=10)
    command = child.match.group(1)
    child.expect(pexpect.EOF, timeout=10)
    shown = str(keel.relative_to(ROOT)) if keel.is_relative_to(ROOT) else str(keel)
    assert command in (shown, "keel")  # "keel" when that very command is on the PATH
