"""A turn cut off by SIGKILL is finished on the next call; nothing is done or logged twice."""

import re
import signal
import subprocess
import tempfile
import threading
import time

import httpx
import pytest

from keel.checkpoints.backend import open_backend
from keel.checkpoints.messages import MessageLog
from keel.graphs.builder import build_graph
from keel.graphs.runner import snapshot
from keel.tools.tasks.store import TaskStore
from tests.conftest import new_postgres_database
from tests.helpers import open_database
from tests.integration.server import free_port, keel_server, say, wait_until_ready
from tests.keel_process import KEEL, ROOT, keel_env, run_keel, start_keel

PAUSE_POINTS = ["before:response", "after_tool_commit"]


@pytest.fixture(params=["sqlite", "postgres"])
def durable_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'keel.db'}"
    return new_postgres_database(request.getfixturevalue("postgres_server"))


def kill_at_pause(url: str, pause: str, lines: list[str]) -> str:
    """Start `keel chat`, type ``lines``, SIGKILL it at the pause point; the conversation id."""
    child = start_keel(url, ["chat"], KEEL_PAUSE_AT=pause)
    paused = threading.Event()
    err: list[str] = []

    def watch() -> None:
        for line in child.stderr:
            err.append(line)
            if line.startswith(f"KEEL_PAUSED {pause}"):
                paused.set()
                return

    threading.Thread(target=watch, daemon=True).start()
    child.stdin.write("".join(f"{line}\n" for line in lines))
    child.stdin.flush()
    try:
        assert paused.wait(120), "".join(err)
        first = ""  # "New conversation ...", then "Conversation: <id>" at the first message
        for _ in range(5):
            line = child.stdout.readline()
            first += line
            if not line or "Conversation: " in line:
                break
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(30)
    assert child.returncode == -signal.SIGKILL
    match = re.search(r"Conversation: ([0-9a-f-]{36})", first)
    assert match, first
    return match.group(1)


async def tasks_and_log(url: str, cid: str):
    async with open_database(url) as db:
        tasks = await TaskStore(db).list("local")
        log = await MessageLog(db).page(cid)
        ledger = (await db.fetchone("SELECT count(*) AS n FROM keel_tool_results"))["n"]
    return tasks, log, ledger


@pytest.mark.parametrize("pause", PAUSE_POINTS)
async def test_a_killed_turn_is_finished_on_the_next_call(durable_url, pause):
    cid = kill_at_pause(durable_url, pause, ["Add buy milk"])

    tasks, log, _ = await tasks_and_log(durable_url, cid)
    assert [t["title"] for t in tasks] == ["buy milk"]  # the mutation committed before the kill
    assert log == []  # the turn had not ended: nothing logged yet

    after = run_keel(durable_url, ["chat", "--conversation", cid], "Show all\n/quit\n")
    assert after.returncode == 0, after.stderr
    out = after.stdout
    assert "Finished the turn that was cut off last time:" in out
    assert out.index("Created task: buy milk") < out.index("Your tasks:")
    assert "- [ ] 1. buy milk" in out

    tasks, log, ledger = await tasks_and_log(durable_url, cid)
    assert [t["title"] for t in tasks] == ["buy milk"]  # exactly once
    assert ledger == 1
    keys = [m.key for m in log]
    assert len(keys) == len(set(keys))
    said = [(m.role, m.content) for m in log if m.role != "tool"]
    assert said.count(("user", "Add buy milk")) == 1
    assert said.count(("assistant", "Created task: buy milk")) == 1
    assert said.count(("user", "Show all")) == 1
    assert [m.role for m in log] == ["user", "tool", "assistant"] * 2


async def test_a_kill_while_waiting_for_a_confirmation_loses_nothing(durable_url):
    cid = kill_at_pause(durable_url, "before:response", ["Add buy milk"])
    run_keel(durable_url, ["chat", "--conversation", cid], "Delete task 1\n")
    result = run_keel(durable_url, ["chat", "--conversation", cid], "yes\n")
    assert "Are you sure you want to delete task 1? (yes/no)" in result.stdout
    assert "Deleted task 1: buy milk" in result.stdout
    tasks, _, _ = await tasks_and_log(durable_url, cid)
    assert tasks == []


async def test_a_kill_after_the_model_asked_for_a_tool_finishes_that_turn_once(durable_url):
    cid = kill_at_pause(durable_url, "before:tool_execution", ["Add buy milk"])
    tasks, log, _ = await tasks_and_log(durable_url, cid)
    assert tasks == [] and log == []  # nothing had run, nothing was logged

    after = run_keel(durable_url, ["chat", "--conversation", cid], "Show all\n/quit\n")
    assert after.returncode == 0, after.stderr
    assert "Finished the turn that was cut off last time:" in after.stdout
    assert after.stdout.count("Created task: buy milk") == 1
    assert "- [ ] 1. buy milk" in after.stdout

    tasks, log, ledger = await tasks_and_log(durable_url, cid)
    assert [t["title"] for t in tasks] == ["buy milk"] and ledger == 1
    keys = [m.key for m in log]
    assert len(keys) == len(set(keys))
    said = [(m.role, m.content) for m in log if m.content and m.role != "tool"]
    assert said == [
        ("user", "Add buy milk"),
        ("assistant", "Created task: buy milk"),  # once: no reply logged twice
        ("user", "Show all"),
        ("assistant", "Your tasks:\n- [ ] 1. buy milk"),
    ]
    assert [m.role for m in log] == ["user", "tool", "assistant"] * 2
    async with open_backend(durable_url) as backend:
        state = await snapshot(build_graph(backend.saver), cid)
    assert state["mission"] == "Show all"  # the new message got a mission of its own
    assert all(i["status"] == "done" for i in state["todolist"]["items"])


def kill_chat_at(url: str, pause: str, cid: str, lines: list[str]) -> None:
    """Continue ``cid`` in `keel chat`, type ``lines``, SIGKILL it at the pause point."""
    child = start_keel(url, ["chat", "--conversation", cid], KEEL_PAUSE_AT=pause)
    try:
        child.stdin.write("".join(f"{line}\n" for line in lines))
        child.stdin.flush()
        for line in child.stderr:
            if line.startswith(f"KEEL_PAUSED {pause}"):
                break
        else:
            raise AssertionError("keel chat ended without pausing")
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(30)


async def test_a_kill_after_a_confirmed_delete_finishes_it_and_asks_nothing_again(durable_url):
    """The message that answered the question is noted before the delete runs: the next message
    finishes that turn (the delete once, its reply), and is not taken as another answer."""
    started = run_keel(durable_url, ["chat"], "Add buy milk\nAdd eggs\nDelete task 1\n")
    match = re.search(r"Conversation: ([0-9a-f-]{36})", started.stdout)
    assert match and "Are you sure you want to delete task 1?" in started.stdout, started.stdout
    cid = match.group(1)
    kill_chat_at(durable_url, "after_tool_commit", cid, ["yes"])
    tasks, _, _ = await tasks_and_log(durable_url, cid)
    assert [t["title"] for t in tasks] == ["eggs"]  # the delete committed before the kill

    after = run_keel(durable_url, ["chat", "--conversation", cid], "Show all\n/quit\n")
    assert after.returncode == 0, after.stderr
    assert "Finished the turn that was cut off last time:" in after.stdout
    assert "Deleted task 1: buy milk" in after.stdout
    assert "Please answer yes or no" not in after.stdout
    assert "- [ ] 1. eggs" in after.stdout or "- [ ] 2. eggs" in after.stdout
    tasks, log, _ = await tasks_and_log(durable_url, cid)
    assert [t["title"] for t in tasks] == ["eggs"]
    said = [(m.role, m.content) for m in log if m.role != "tool"]
    assert said.count(("user", "yes")) == 1
    assert said.count(("assistant", "Deleted task 1: buy milk")) == 1


async def test_a_turn_another_process_lost_is_finished_by_a_process_that_knew_the_conversation(
    durable_url,
):
    """The serving process remembers where its last turn left the conversation; a turn another
    process ran since and lost before its checkpoint still shows, read with the turn lock."""
    with keel_server(durable_url) as first:
        cid = httpx.post(f"{first.url}/v1/conversations", json={}).json()["conversation_id"]
        assert say(first, cid, "Add buy milk").json()["reply"] == "Created task: buy milk"
        killed_at_tool_commit(durable_url, cid, "Add eggs")
        answer = say(first, cid, "Show all", status=200).json()
        assert answer["recovered_reply"] == "Created task: eggs"
        assert answer["reply"] == "Your tasks:\n- [ ] 1. buy milk\n- [ ] 2. eggs"
    tasks, log, ledger = await tasks_and_log(durable_url, cid)
    assert [t["title"] for t in tasks] == ["buy milk", "eggs"] and ledger == 2
    users = [m.content for m in log if m.role == "user"]
    assert users == ["Add buy milk", "Add eggs", "Show all"]


async def test_an_edit_cut_off_is_finished_on_its_own_branch(durable_url):
    """A message edited (run from the checkpoint before the original) whose process died after
    its tool committed is finished by the next turn, from that checkpoint, once."""
    with keel_server(durable_url) as first:
        cid = httpx.post(f"{first.url}/v1/conversations", json={}).json()["conversation_id"]
        say(first, cid, "Add apples")
        say(first, cid, "Add pears")
        log_url = f"{first.url}/v1/conversations/{cid}/messages"
        pears = [m for m in httpx.get(log_url).json() if m["content"] == "Add pears"][0]
        killed_at_tool_commit(durable_url, cid, "Add plums", pears["checkpoint_id"])
        answer = say(first, cid, "Show all", status=200).json()
        assert answer["recovered_reply"] == "Created task: plums"
        assert answer["reply"] == "Your tasks:\n- [ ] 1. apples\n- [ ] 2. pears\n- [ ] 3. plums"
        shown = [m["content"] for m in httpx.get(log_url).json() if m["role"] == "user"]
        assert shown == ["Add apples", "Add plums", "Show all"]
        edited = [m for m in httpx.get(log_url).json() if m["content"] == "Add plums"][0]
        assert (edited["branch_count"], edited["branch_index"]) == (2, 2)
    tasks, log, ledger = await tasks_and_log(durable_url, cid)
    assert [t["title"] for t in tasks] == ["apples", "pears", "plums"] and ledger == 3
    users = [m.content for m in log if m.role == "user"]
    assert users.count("Add plums") == 1 and users.count("Add pears") == 1


def killed_at_tool_commit(url: str, cid: str, content: str, checkpoint: str | None = None) -> None:
    """A second `keel serve` on the same database runs ``content`` (from ``checkpoint``) and is
    SIGKILLed once its tool call committed."""
    port, output = free_port(), tempfile.TemporaryFile(mode="w+")
    server = subprocess.Popen(
        [*KEEL, "serve", "--port", str(port)],
        stdout=output,
        stderr=subprocess.STDOUT,
        text=True,
        env=keel_env(url, KEEL_PAUSE_AT="after_tool_commit"),
        cwd=ROOT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(server, f"{base}/readyz", output, "keel serve")
        args = (base, cid, content, checkpoint)
        threading.Thread(target=_quietly, args=args, daemon=True).start()
        deadline = time.monotonic() + 60
        while "KEEL_PAUSED after_tool_commit" not in _read(output):
            assert time.monotonic() < deadline, _read(output)[-3000:]
            time.sleep(0.05)
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait(30)
        output.close()


def _read(output) -> str:
    output.seek(0)
    return output.read()


def _quietly(url: str, cid: str, content: str, checkpoint: str | None) -> None:
    try:
        body = {"content": content, "checkpoint_id": checkpoint}
        httpx.post(f"{url}/v1/conversations/{cid}/messages", json=body, timeout=120)
    except httpx.HTTPError:
        pass  # the server was killed under the request
