"""A confirmation names its task, and a rename its new title, in the page after a reload too.

Live, the page's card names the change; once the page is reloaded, the question is read back from
the conversation's messages, which name it the same way.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.test_web_page import DESKTOP, PHONE, say
from tests.integration.server import Server, keel_server


@pytest.fixture
def server(tmp_path) -> Iterator[Server]:
    with keel_server(f"sqlite:///{tmp_path / 'keel.db'}") as server:
        yield server


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_answered_and_waiting_questions_name_their_task_after_a_reload(
    browser: Browser, server: Server, size: dict
) -> None:
    page = browser.new_page(viewport=size)
    page.goto(server.url)
    say(page, "Add buy milk")
    say(page, "Rename task 1 to oat milk")
    expect(page.locator("#confirm-prompt")).to_have_text("Rename task 1: buy milk -> oat milk?")
    page.locator("#confirm-yes").click()
    expect(page.locator(".msg.assistant").last).to_have_text("keel: Renamed task 1 to: oat milk")
    say(page, "Delete task 1")
    expect(page.locator("#confirm-prompt")).to_have_text("Delete task 1 - oat milk?")

    page.reload()
    asked = page.locator(".msg.assistant", has_text="Are you sure you want to rename task 1?")
    expect(asked).to_contain_text("Rename task 1: buy milk -> oat milk")
    expect(page.locator("#confirm-prompt")).to_have_text("Delete task 1 - oat milk?")
    page.locator("#confirm-yes").click()
    expect(page.locator(".msg.assistant").last).to_have_text("keel: Deleted task 1: oat milk")

    page.reload()
    deleted = page.locator(".msg.assistant", has_text="Are you sure you want to delete task 1?")
    expect(deleted).to_contain_text("Delete task 1 - oat milk")
    page.close()
