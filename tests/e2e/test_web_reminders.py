"""Reminders on the chat page, in Chromium against a real `keel serve`: said in the conversation
open, told with a way to it when another is open, and told when the page opens again after one
fell due while it was closed.
"""

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.test_web_page import DESKTOP, blank, conversation_id, record_errors, say
from tests.integration.server import Server, keel_server

SECONDS = 30_000  # ms: a reminder is said within about a second of its time, the page polls


@pytest.fixture
def server(tmp_path) -> Iterator[Server]:
    with keel_server(f"sqlite:///{tmp_path / 'keel.db'}") as server:
        yield server


def test_a_reminder_is_shown_where_it_was_set_and_told_everywhere_else(
    browser: Browser, server: Server
):
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    errors = record_errors(page)
    page.goto(f"{server.url}/")
    blank(page)

    # Said in the conversation open, as keel's own message in its log.
    expect(say(page, "remind me in 2 seconds to check the laundry")).to_contain_text(
        "Created task: check the laundry"
    )
    first = conversation_id(page)
    laundry = page.locator(".msg.assistant", has_text="⏰ Reminder: check the laundry (task 1).")
    expect(laundry).to_have_count(1, timeout=SECONDS)

    # Set here, said while another conversation is open: told, with a way to it.
    say(page, "remind me in 3 seconds to feed the cat")
    page.locator("#new-conversation").click()
    blank(page)
    expect(page.locator("#status")).to_contain_text(
        "⏰ Reminder: feed the cat (task 2). In “", timeout=SECONDS
    )
    page.locator("#status-action", has_text="Open").click()
    expect(page.locator(".msg.assistant", has_text="⏰ Reminder: feed the cat")).to_have_count(1)
    assert conversation_id(page) == first

    # Said while the page was closed: told when it opens again.
    second = page.request.post(f"{server.url}/v1/conversations", data={}).json()
    said = page.request.post(
        f"{server.url}/v1/conversations/{first}/messages",
        data={"content": "remind me in 2 seconds to water the plants"},
    )
    assert said.ok and "Created task" in said.json()["reply"], said.text()
    page.close()
    again = context.new_page()
    again.wait_for_timeout(4000)  # its time comes while no page is open
    again.goto(f"{server.url}/?c={second['conversation_id']}")
    expect(again.locator("#status")).to_contain_text(
        "⏰ Reminder: water the plants (task 3).", timeout=SECONDS
    )
    assert errors == []
    context.close()
