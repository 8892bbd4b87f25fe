"""The chat page as a window, in a real Chromium: only its panels scroll, replies read as text.

After a long conversation the page is no taller than the window at desktop and phone size, and the
wheel over each panel scrolls that panel alone; a list reply is drawn as a list, not as Markdown;
opening the page makes no conversation until the first message.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.test_web_page import DESKTOP, PHONE, say
from tests.integration.server import Server, keel_server

PAGE_HEIGHT = "() => [document.scrollingElement.scrollHeight, window.innerHeight, window.scrollY]"


@pytest.fixture(scope="module")
def long_talk() -> Iterator[tuple[Server, str]]:
    """A server whose local user has one conversation of 40 messages and 20 tasks."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp, keel_server(f"sqlite:///{tmp}/keel.db") as server:
        with httpx.Client(base_url=server.url, timeout=60) as http:
            cid = http.post("/v1/conversations", json={}).json()["conversation_id"]
            for i in range(20):
                said = {"content": f"Add errand number {i}"}
                assert http.post(f"/v1/conversations/{cid}/messages", json=said).status_code == 200
        yield server, cid


def scrolled_alone(page: Page, selector: str) -> bool:
    """The wheel over ``selector`` scrolls it (when it can scroll) and never the page."""
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    before = page.locator(selector).evaluate("(node) => node.scrollTop")
    page.mouse.wheel(0, -400 if before else 400)
    page.wait_for_timeout(300)
    after = page.locator(selector).evaluate("(node) => node.scrollTop")
    overflows = page.locator(selector).evaluate("(n) => n.scrollHeight > n.clientHeight + 1")
    _, _, page_y = page.evaluate(PAGE_HEIGHT)
    return page_y == 0 and (after != before or not overflows)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_after_40_messages_only_the_panels_scroll(browser: Browser, long_talk, viewport):
    server, cid = long_talk
    page = browser.new_page(viewport=viewport)
    page.goto(f"{server.url}/?c={cid}")
    expect(page.locator("#messages .msg.user")).to_have_count(20)
    height, window, _ = page.evaluate(PAGE_HEIGHT)
    assert height <= window, f"the page is {height} px tall in a {window} px window"
    assert scrolled_alone(page, "#messages")
    if viewport is DESKTOP:
        assert scrolled_alone(page, "#details")
        assert scrolled_alone(page, ".topics-section")
    else:
        page.locator("#toggle-details").click()
        assert scrolled_alone(page, "#details")
    height, window, _ = page.evaluate(PAGE_HEIGHT)
    assert height <= window
    page.close()


def test_a_list_reply_is_drawn_as_a_list(browser: Browser, long_talk):
    server, cid = long_talk
    page = browser.new_page(viewport=DESKTOP)
    page.goto(f"{server.url}/?c={cid}")
    reply = say(page, "What's on my list?")
    items = reply.locator(".reply-list li")
    expect(items.first).to_contain_text("1. errand number 0")
    assert items.count() >= 10
    assert "- [ ]" not in reply.inner_text()
    page.reload()
    again = page.locator("#messages .msg.assistant").last
    expect(again.locator(".reply-list li").first).to_contain_text("1. errand number 0")
    assert "- [ ]" not in again.inner_text()
    page.close()


def test_opening_the_page_makes_no_conversation_until_the_first_message(browser: Browser, tmp_path):
    with keel_server(f"sqlite:///{tmp_path / 'keel.db'}") as server:
        page = browser.new_page(viewport=DESKTOP)
        page.goto(server.url + "/")
        expect(page.locator("#messages")).to_contain_text("Say hello")
        page.locator("#new-conversation").click()
        page.reload()
        expect(page.locator("#messages")).to_contain_text("Say hello")
        listed = httpx.get(f"{server.url}/v1/conversations", timeout=30).json()
        assert listed == [], listed
        say(page, "Add buy milk")
        expect(page.locator("#conversations .conversation")).to_have_count(1)
        assert "c=" in page.url
        page.close()
