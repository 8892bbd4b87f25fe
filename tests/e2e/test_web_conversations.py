"""The chat page's conversation list in a real Chromium: rename, find, delete, and topics in view.

With many conversations the list scrolls on its own and the open conversation's topics stay on
screen, at desktop width and in the phone drawer. A conversation is renamed in place (its new name
is the header's too), found by words in its messages, and deleted after a confirm.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect
from playwright.sync_api import Error as PlaywrightError

from tests.e2e.test_web_page import DESKTOP, PHONE, conversation_id, say
from tests.integration.server import Server, keel_server


@pytest.fixture(scope="module")
def crowded() -> Iterator[Server]:
    """A server whose local user has 40 conversations, one holding the word "quokka"."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp, keel_server(f"sqlite:///{tmp}/keel.db") as server:
        with httpx.Client(base_url=server.url, timeout=60) as http:
            for i in range(40):
                cid = http.post("/v1/conversations", json={}).json()["conversation_id"]
                text = "Add feed the quokka" if i == 3 else f"Add errand number {i}"
                http.post(f"/v1/conversations/{cid}/messages", json={"content": text})
        yield server


def in_view(page: Page, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    size = page.viewport_size
    return bool(box and size and box["y"] >= 0 and box["y"] + 20 <= size["height"])


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_topics_stay_in_view_however_many_conversations(browser: Browser, crowded, viewport):
    page = browser.new_page(viewport=viewport)
    page.goto(crowded.url + "/")
    if viewport is PHONE:
        page.locator("#toggle-sidebar").click()
    expect(page.locator("#conversations .conversation")).to_have_count(40)
    expect(page.locator("#topics .topic").first).to_be_visible()
    assert in_view(page, "#topics .topic"), "the first topic is off screen"
    for attempt in range(3):
        try:
            page.locator("#conversations .conversation").last.scroll_into_view_if_needed()
            break
        except PlaywrightError:  # the list was drawn again under the scroll: scroll the new one
            if attempt == 2:
                raise
    assert in_view(page, "#topics-heading"), "scrolling the list moved the topics away"
    page.close()


def test_a_search_finds_a_conversation_by_a_word_in_it(browser: Browser, crowded):
    page = browser.new_page(viewport=DESKTOP)
    page.goto(crowded.url + "/")
    expect(page.locator("#conversations .conversation")).to_have_count(40)  # the list is drawn
    page.locator("#conversation-search").fill("QUOKKA")
    expect(page.locator("#conversations .conversation")).to_have_count(1)
    expect(page.locator("#conversations .conversation")).to_contain_text("feed the quokka")
    page.locator("#conversation-search").fill("no such words anywhere")
    expect(page.locator("#conversations .empty")).to_contain_text("No conversation holds")
    page.close()


ACTIONS_SHOWN = "(entry) => getComputedStyle(entry.querySelector('.entry-actions')).opacity"
TIME_READABLE = """(entry) => {
    const time = entry.querySelector(".nav-meta");
    const box = time.getBoundingClientRect();
    const top = document.elementFromPoint(box.right - 1, box.top + box.height / 2);
    return time.textContent !== "" && time.scrollWidth <= time.clientWidth
        && top !== null && time.contains(top);
}"""
"""The entry's time is whole on screen: nothing lies over its end and it is not cut short."""


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_rename_and_delete_show_without_a_pointer_and_leave_the_time_readable(
    browser: Browser, tmp_path, viewport
):
    with keel_server(f"sqlite:///{tmp_path / 'keel.db'}") as server:
        page = browser.new_page(viewport=viewport)
        page.goto(server.url + "/")
        say(page, "Add buy milk")
        if viewport is PHONE:
            page.locator("#toggle-sidebar").click()
        page.locator("#new-conversation").click()
        expect(page.locator("#messages .empty")).to_be_visible()
        say(page, "Add call the plumber")  # a new conversation is listed from its first message
        if viewport is PHONE:
            page.locator("#toggle-sidebar").click()
        page.mouse.move(viewport["width"] - 1, viewport["height"] - 1)  # pointing at no entry
        entries = page.locator("#conversations .conversation-entry")
        expect(entries).to_have_count(2)
        opened = entries.filter(has=page.locator('[aria-current="true"]'))
        other = entries.filter(has_text="Add buy milk")
        # The open conversation's buttons show without a pointer; at phone width, every entry's.
        assert opened.evaluate(ACTIONS_SHOWN) == "1"
        assert other.evaluate(ACTIONS_SHOWN) == ("1" if viewport is PHONE else "0")
        for entry in [opened, other] if viewport is PHONE else [opened]:
            assert entry.evaluate(TIME_READABLE), entry.locator(".nav-meta").inner_text()
        other.hover()
        assert other.evaluate(ACTIONS_SHOWN) == "1"
        assert other.evaluate(TIME_READABLE), other.locator(".nav-meta").inner_text()
        opened.get_by_role("button", name="Rename “Add call the plumber”").click()
        expect(page.locator(".rename-box")).to_be_focused()
        page.close()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_rename_then_delete_the_open_conversation(browser: Browser, tmp_path, viewport):
    with keel_server(f"sqlite:///{tmp_path / 'keel.db'}") as server:
        page = browser.new_page(viewport=viewport)
        page.goto(server.url + "/")
        say(page, "Add buy milk")
        first = conversation_id(page)
        if viewport is PHONE:
            page.locator("#toggle-sidebar").click()
        page.locator("#new-conversation").click()
        expect(page.locator("#messages .empty")).to_be_visible()
        say(page, "Add call the plumber")
        expect(page.locator("#chat-title")).to_have_text("Add call the plumber")
        if viewport is PHONE:
            page.locator("#toggle-sidebar").click()
        entry = page.locator("#conversations .conversation-entry").first
        entry.hover()
        entry.get_by_role("button", name="Rename “Add call the plumber”").click()
        page.locator(".rename-box").fill("House jobs")
        page.locator(".rename-box").press("Enter")
        expect(page.locator("#conversations .conversation").first).to_contain_text("House jobs")
        expect(page.locator("#chat-title")).to_have_text("House jobs")

        page.once("dialog", lambda dialog: dialog.dismiss())
        page.locator("#conversations .conversation-entry").first.hover()
        page.get_by_role("button", name="Delete “House jobs”").click()
        expect(page.locator("#conversations .conversation")).to_have_count(2)

        page.once("dialog", lambda dialog: dialog.accept())
        page.locator("#conversations .conversation-entry").first.hover()
        page.get_by_role("button", name="Delete “House jobs”").click()
        expect(page.locator("#conversations .conversation")).to_have_count(1)
        expect(page.locator("#status")).to_contain_text("Deleted “House jobs”")
        expect(page).to_have_url(f"{server.url}/?c={first}")
        expect(page.locator("#chat-title")).to_have_text("Add buy milk")
        page.close()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_confirmation_card_names_what_will_change(browser: Browser, tmp_path, viewport):
    with keel_server(f"sqlite:///{tmp_path / 'keel.db'}") as server:
        page = browser.new_page(viewport=viewport)
        page.goto(server.url + "/")
        for text in ["Add buy milk", "Add water plants", "Add feed cat"]:
            say(page, text)
        say(page, "Rename task 1 to buy oat milk")
        expect(page.locator("#confirm-prompt")).to_have_text(
            "Rename task 1: buy milk -> buy oat milk?"
        )
        page.locator("#confirm-no").click()
        expect(page.locator(".msg.assistant").last).to_contain_text("was not renamed")
        expect(page.locator("#send")).to_be_enabled()
        say(page, "Delete tasks 2 and 3")
        expect(page.locator("#confirm-prompt")).to_have_text("Make these 2 changes?")
        expect(page.locator("#confirm-changes li")).to_have_text(
            ["Delete task 2 - water plants", "Delete task 3 - feed cat"]
        )
        # The question waiting is the card's alone; one answered is a bubble, as after a reload.
        expect(page.locator(".msg.assistant", has_text="delete 2 tasks")).to_have_count(0)
        expect(page.locator(".msg.assistant", has_text="rename task 1")).to_have_count(1)
        page.reload()  # the card comes back, and still alone
        expect(page.locator(".msg.assistant", has_text="rename task 1")).to_have_count(1)
        expect(page.locator("#confirm-changes li")).to_have_count(2)
        expect(page.locator(".msg.assistant", has_text="delete 2 tasks")).to_have_count(0)
        page.close()
