"""LangChain's Agent Chat UI in Chromium against `langgraph dev` serving keel, as a user runs both.

The server starts from a clean folder with keel's default settings (the SQLite database at its
relative default path, the offline model). The UI is the vendored copy in ``agent_chat_ui/``
(its origin in ``ORIGIN.md``), its packages installed once from the npm registry with the pinned
lockfile into a cache folder; its development server runs it (the production build fetches web
fonts, which this machine cannot).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

import httpx
import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from keel.nodes.reset_conversation import RESET_MESSAGE
from tests.e2e.test_langgraph_server import langgraph_server
from tests.integration.server import free_port, running

UI_SOURCE = Path(__file__).with_name("agent_chat_ui")
PNPM = "pnpm@10.5.1"  # the lockfile's packageManager
INSTALL_SECONDS = 900
START_SECONDS = 240  # the development server compiles the page on its first request
REPLY_MS = 60_000
expect.set_options(timeout=REPLY_MS)
pytestmark = pytest.mark.heavy  # its packages are ~900 MB from npm on a fresh machine
INTERNAL = ("action_requests", "review_configs", "tool_call_ids", "DONE:", "turn_note", "window")


def installed_ui() -> Path:
    """The UI's source with its packages, in a cache folder named by the source's digest."""
    digest = hashlib.sha256()
    for path in sorted(UI_SOURCE.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(UI_SOURCE)).encode() + path.read_bytes())
    home = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    folder = home / "keel-agent-chat-ui" / digest.hexdigest()[:16]
    if not (folder / "node_modules" / ".bin" / "next").exists():
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(UI_SOURCE, folder)
        subprocess.run(
            ["npx", "--yes", PNPM, "install", "--frozen-lockfile"],
            cwd=folder,
            check=True,
            timeout=INSTALL_SECONDS,
            env={**os.environ, "CI": "true"},
        )
    return folder


@pytest.fixture(scope="module")
def servers(tmp_path_factory) -> Iterator[tuple[str, str]]:
    """``langgraph dev`` from a clean folder and the UI's development server; yields both URLs."""
    workdir = tmp_path_factory.mktemp("keel-acui")
    data = str(workdir / "data")  # the default database, in a data directory of its own
    with langgraph_server(None, workdir, XDG_DATA_HOME=data) as api:
        folder = installed_ui()
        port = free_port()
        env = {
            **os.environ,
            "NEXT_PUBLIC_API_URL": api,
            "NEXT_PUBLIC_ASSISTANT_ID": "keel",
            "NEXT_TELEMETRY_DISABLED": "1",
        }
        ui = f"http://127.0.0.1:{port}"
        command = [str(folder / "node_modules" / ".bin" / "next"), "dev", "--port", str(port)]
        with running(command, folder, env, workdir / "ui.log", ui, START_SECONDS):
            httpx.get(ui, timeout=START_SECONDS)  # the first page compiles here
            yield api, ui


def _open(browser: Browser, url: str) -> Page:
    page = browser.new_page(viewport={"width": 1500, "height": 950})
    page.set_default_timeout(REPLY_MS)
    page.goto(url)
    return page


def _say(page: Page, text: str) -> None:
    box = page.get_by_placeholder("Type your message...")
    box.fill(text)
    box.press("Enter")


def _human(page: Page, text: str) -> Locator:
    """The user's message ``text`` with its edit and branch controls."""
    return page.locator("div.group.ml-auto").filter(has=page.get_by_text(text, exact=True)).last


def _assistant(page: Page, text: str) -> Locator:
    """keel's reply ``text`` with its regenerate and branch controls."""
    return page.locator("div.group.mr-auto").filter(has=page.get_by_text(text, exact=True)).last


def _thread(api: str, page: Page, path: str = "") -> Any:
    """The server's answer about the page's thread (``path`` under it, ``/history`` posted)."""
    thread = parse_qs(urlparse(page.url).query)["threadId"][0]
    if path:
        return httpx.post(f"{api}/threads/{thread}{path}", json={"limit": 1000}).json()
    return httpx.get(f"{api}/threads/{thread}").json()


def _forks(api: str, page: Page) -> int:
    """The runs started from an earlier checkpoint of the page's thread (edits, regenerations)."""
    return sum(1 for s in _thread(api, page, "/history") if s["metadata"].get("source") == "fork")


def _edit(page: Page, old: str, new: str) -> None:
    message = _human(page, old)
    message.hover()
    message.get_by_role("button", name="Edit").click()
    editing = page.locator("div.group.ml-auto").filter(has=page.locator("textarea"))
    editing.locator("textarea").fill(new)
    editing.get_by_role("button", name="Submit").click()


def _nothing_internal(page: Page) -> None:
    shown = page.locator("body").inner_text()
    assert not [word for word in INTERNAL if word in shown], shown[-2000:]


def test_a_whole_conversation_in_agent_chat_ui(servers, browser: Browser):
    api, ui = servers
    page = _open(browser, f"{ui}/?{urlencode({'apiUrl': api, 'assistantId': 'keel'})}")

    _say(page, "add buy milk")
    expect(page.get_by_text("Created task: buy milk")).to_be_visible()
    _say(page, "add call mom")
    expect(page.get_by_text("Created task: call mom")).to_be_visible()
    _say(page, "list my tasks")
    expect(page.get_by_text("Your tasks:")).to_be_visible()
    listed = page.locator("li").filter(has_text=re.compile(r"^\s*\d\. (buy milk|call mom)\s*$"))
    expect(listed).to_have_count(2)  # a Markdown list, each with its box

    _say(page, "delete buy milk")  # Approve on the card under the waiting call
    card = page.get_by_role("button", name="Approve")
    expect(card).to_be_visible()
    expect(page.get_by_text("Task Id", exact=True)).to_be_visible()  # the call's arguments
    _nothing_internal(page)
    card.click()
    expect(page.get_by_text("Deleted task 1: buy milk")).to_be_visible()

    _say(page, "delete call mom")  # answered by typing instead
    expect(page.get_by_role("button", name="Approve")).to_be_visible()
    _say(page, "yes")
    expect(page.get_by_text("Deleted task 2: call mom")).to_be_visible()
    expect(page.get_by_text("Are you sure you want to delete task 2? (yes/no)")).to_be_visible()
    expect(page.get_by_role("button", name="Approve")).to_have_count(0)
    _nothing_internal(page)

    page.reload()  # the whole conversation comes back from the thread's state
    expect(page.get_by_text("Deleted task 2: call mom")).to_be_visible()
    expect(_human(page, "add buy milk")).to_be_visible()
    page.close()

    listing = {"apiUrl": api, "assistantId": "keel", "chatHistoryOpen": "true"}
    page = _open(browser, f"{ui}/?{urlencode(listing)}")
    page.get_by_role("button", name="add buy milk").first.click()  # titled by its first message
    expect(page.get_by_text("Deleted task 2: call mom")).to_be_visible()

    # Agent Chat UI reads the thread's newest ten checkpoints, and a tool turn writes four (its
    # input, the input step, the model's calls before any runs, its end): the last turn's message
    # is the one its branch controls reach
    _say(page, "add water the plants")
    expect(page.get_by_text("Created task: water the plants")).to_be_visible()
    _edit(page, "add water the plants", "add feed the cat")  # a new branch
    expect(page.get_by_text("Created task: feed the cat")).to_be_visible()
    expect(page.get_by_text("Created task: water the plants")).to_have_count(0)
    edited = _human(page, "add feed the cat")
    edited.hover()
    expect(edited.get_by_text("2 / 2")).to_be_visible()
    edited.get_by_role("button").first.click()  # back to the first branch
    expect(page.get_by_text("Created task: water the plants")).to_be_visible()
    expect(_human(page, "add water the plants")).to_be_visible()
    expect(page.get_by_text("Created task: feed the cat")).to_have_count(0)

    forks = _forks(api, page)
    reply = _assistant(page, "Created task: water the plants")  # regenerate: the turn runs again
    reply.hover()
    reply.get_by_role("button", name="Refresh").click()
    for _ in range(REPLY_MS // 500):  # a run from the reply's parent checkpoint, to its end
        if _forks(api, page) > forks and _thread(api, page)["status"] == "idle":
            break
        page.wait_for_timeout(500)
    assert _forks(api, page) == forks + 1
    expect(page.get_by_text("Created task: water the plants", exact=True)).to_have_count(1)
    _say(page, "list my tasks")  # the same turn's call again: the ledger's answer, no new task
    watering = page.locator("li").filter(has_text=re.compile(r"^\s*\d\. water the plants\s*$"))
    expect(watering).to_have_count(1)

    _say(page, "/reset")
    expect(page.get_by_text(RESET_MESSAGE.split(".")[0])).to_be_visible()
    _nothing_internal(page)
    page.close()


def test_lists_places_and_dates_in_agent_chat_ui(servers, browser: Browser):
    api, ui = servers
    page = _open(browser, f"{ui}/?{urlencode({'apiUrl': api, 'assistantId': 'keel'})}")

    _say(page, "add eggs, milk and bread to the shopping list")
    expect(page.get_by_text("Created task: bread (shopping list)")).to_be_visible()
    _say(page, "add batteries to the hardware list")
    expect(page.get_by_text("Created task: batteries (hardware list)")).to_be_visible()
    _say(page, "add call the dentist on friday")
    dentist = re.compile(r"Created task: call the dentist \(due Fri \d+ \w+ \d{4}\)")
    expect(page.get_by_text(dentist)).to_be_visible()
    _say(page, "add renew passport, it's urgent")
    expect(page.get_by_text("Created task: renew passport", exact=True)).to_be_visible()

    _say(page, "list my tasks")  # grouped under each list's heading, the todo list first
    expect(page.get_by_text("Hardware list:")).to_be_visible()
    todo = page.locator("li").filter(has_text=re.compile(r"^\s*\d+\. \w"))
    expect(todo.first).to_contain_text("renew passport")  # urgent: at the top of its list
    expect(page.locator("li").filter(has_text=re.compile(r"^\s*\d+\. bread\s*$"))).to_be_visible()

    _say(page, "what's on my shopping list?")
    expect(page.get_by_text("Your tasks on the shopping list:")).to_be_visible()
    _say(page, "move the dentist to monday")  # a change of date asks first
    card = page.get_by_role("button", name="Approve")
    expect(card).to_be_visible()
    card.click()
    moved = re.compile(r"Rescheduled task \d+: call the dentist \(due Mon \d+ \w+ \d{4}\)")
    expect(page.get_by_text(moved)).to_be_visible()

    _say(page, "wipe the hardware list")  # the whole list: one question, naming it
    expect(page.get_by_role("button", name="Approve")).to_be_visible()
    _say(page, "yes")
    expect(page.get_by_text("Cleared the hardware list: 1 task deleted.")).to_be_visible()
    _nothing_internal(page)

    page.reload()  # the lists and dates come back from the thread's state
    expect(page.get_by_text(moved)).to_be_visible()
    page.close()
