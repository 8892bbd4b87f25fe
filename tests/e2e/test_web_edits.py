"""Edit and resend in a real Chromium: an edited message starts a branch, "‹ 2/2 ›" goes back.

A message of the user's has an Edit action; sending the edited text runs from the checkpoint
before that message, what followed it gives way on the page, and the message shows which of its
branches is on screen. The switcher shows the earlier branch (its messages, its plan), and a
message sent there continues that branch. The edit box says that tasks are not undone.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.test_web_page import DESKTOP, PHONE, say
from tests.integration.server import keel_server


def users(page: Page) -> list[str]:
    return [t.strip() for t in page.locator(".msg.user .text").all_inner_texts()]


def edit(page: Page, original: str, text: str) -> None:
    message = page.locator(".msg.user", has_text=original)
    message.get_by_role("button", name="Edit this message and send it again").click()
    box = page.get_by_label("Edited message")
    expect(box).to_have_value(original)
    expect(page.locator(".edit-note")).to_contain_text("Tasks changed since are not undone")
    expect(page.locator(".edit-form button[type=submit]")).to_be_disabled()  # nothing changed yet
    box.fill(text)
    box.press("Enter")
    expect(page.locator(".msg.user", has_text=text)).to_have_count(1)
    expect(page.locator(".msg.user", has_text=original)).to_have_count(0)  # it gave way
    expect(page.locator(".msg.assistant.streaming")).to_have_count(0)
    expect(page.locator("#send")).to_be_enabled()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_edit_a_message_then_switch_between_its_branches(browser: Browser, tmp_path, viewport):
    with keel_server(f"sqlite:///{tmp_path / 'keel.db'}") as server:
        page = browser.new_page(viewport=viewport)
        page.goto(server.url + "/")
        say(page, "Add apples")
        say(page, "Add pears")
        say(page, "Add figs")
        assert users(page) == ["Add apples", "Add pears", "Add figs"]
        expect(page.locator(".msg.user .edit")).to_have_count(3)  # live bubbles get Edit too

        edit(page, "Add pears", "Add plums")
        expect(page.locator(".msg.assistant .text").last).to_have_text("Created task: plums")
        assert users(page) == ["Add apples", "Add plums"]
        switcher = page.locator(".msg.user", has_text="Add plums").locator(".branches")
        expect(switcher.locator(".branch-place")).to_have_text("2/2")

        page.reload()  # a reload shows the same
        expect(page.locator(".msg.user .text")).to_have_count(2)
        switcher = page.locator(".msg.user", has_text="Add plums").locator(".branches")
        expect(switcher.locator(".branch-place")).to_have_text("2/2")
        expect(switcher.get_by_role("button", name="Show the later branch")).to_be_disabled()

        switcher.get_by_role("button", name="Show the earlier branch").click()
        expect(page.locator(".msg.user .text")).to_have_count(3)
        assert users(page) == ["Add apples", "Add pears", "Add figs"]
        earlier = page.locator(".msg.user", has_text="Add pears").locator(".branch-place")
        expect(earlier).to_have_text("1/2")
        expect(page.locator("#status")).to_contain_text("Branch 1 of 2")

        say(page, "Add kiwis")  # continues the branch on screen
        expect(page.locator(".msg.assistant .text").last).to_have_text("Created task: kiwis")
        page.reload()
        expect(page.locator(".msg.user .text")).to_have_count(4)
        assert users(page) == ["Add apples", "Add pears", "Add figs", "Add kiwis"]

        if viewport is PHONE:
            page.locator("#toggle-details").click()
        for title in ("apples", "pears", "figs", "plums", "kiwis"):  # tasks are not undone
            expect(page.locator("#tasks .task", has_text=title)).to_have_count(1)
        page.close()


def test_an_unchanged_edit_or_a_cancel_sends_nothing(browser: Browser, tmp_path):
    with keel_server(f"sqlite:///{tmp_path / 'keel.db'}") as server:
        page = browser.new_page(viewport=DESKTOP)
        page.goto(server.url + "/")
        say(page, "Add apples")
        page.get_by_role("button", name="Edit this message and send it again").click()
        box = page.get_by_label("Edited message")
        box.press("Enter")  # unchanged: nothing happens
        expect(box).to_be_visible()
        box.fill("Add lemons")
        box.press("Escape")
        expect(page.locator(".edit-form")).to_have_count(0)
        assert users(page) == ["Add apples"]
        page.reload()
        expect(page.locator(".msg.user .text")).to_have_count(1)
        expect(page.locator(".msg.user .branches")).to_have_count(0)
        page.close()


def test_the_branch_the_conversation_is_on_is_followed_and_reset_goes_there(
    browser: Browser, tmp_path
):
    with keel_server(f"sqlite:///{tmp_path / 'keel.db'}") as server:
        page = browser.new_page(viewport=DESKTOP)
        page.goto(server.url + "/")
        say(page, "Add apples")
        say(page, "Add pears")
        edit(page, "Add pears", "Add plums")
        expect(page.locator(".msg.user .branch-place")).to_have_text("2/2")

        page.get_by_role("button", name="Show the earlier branch").click()
        expect(page.locator(".msg.user .branch-place")).to_have_text("1/2")
        page.get_by_role("button", name="Show the later branch").click()
        expect(page.locator("#status")).to_contain_text("the one the conversation is on")
        assert users(page) == ["Add apples", "Add plums"]

        page.get_by_role("button", name="Show the earlier branch").click()
        expect(page.locator(".msg.user .branch-place")).to_have_text("1/2")
        page.locator("#reset").click()  # the reset is where the conversation is: shown there
        expect(page.locator(".msg.user", has_text="Add plums")).to_have_count(1)
        expect(page.locator(".msg.user", has_text="Add pears")).to_have_count(0)
        say(page, "Add kiwis")
        page.reload()
        expect(page.locator(".msg.user .text")).to_have_count(3)
        assert users(page) == ["Add apples", "Add plums", "Add kiwis"]
        page.close()
