"""A screenshot of the chat page after a short session, for the docs.

    .venv/bin/python -m tests.e2e.screenshot docs/web-page.png [--dark] [--phone] [--edit]

Starts `keel serve` on a throwaway SQLite database (the offline rule-based model), adds and lists
tasks, deletes one with the Yes button, changes the topic, asks to delete another (so the Yes/No
prompt shows), and saves a 1280x800 PNG (390x844 with --phone). With --edit: a message with a
typo, edited and sent again (its "‹ 2/2 ›" switcher), and the edit box open on the next one.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Literal

from playwright.sync_api import expect, sync_playwright

from tests.e2e.test_web_page import DESKTOP, PHONE, launch, say
from tests.integration.server import keel_server


def session(
    url: str,
    path: Path,
    scheme: Literal["light", "dark"] = "light",
    viewport: dict[str, int] = DESKTOP,
) -> None:
    with sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page(viewport=viewport, color_scheme=scheme)
        page.goto(url)
        say(page, "Add buy milk")
        say(page, "Add call the plumber")
        say(page, "What's on my list?")
        say(page, "Delete task 1")
        page.locator("#confirm-yes").click()
        expect(page.locator(".msg.assistant").last).to_contain_text("Deleted task 1")
        expect(page.locator("#send")).to_be_enabled()
        say(page, "Let's discuss the garden plans")
        say(page, "Add order tomato seeds")
        expect(page.locator("#tasks .task")).to_have_count(2)
        say(page, "Delete task 2")
        expect(page.locator("#confirm")).to_be_visible()
        page.locator("#message").blur()
        page.mouse.move(0, 0)  # no hover on the buttons
        path.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(path))
        browser.close()


def edits(url: str, path: Path, viewport: dict[str, int] = DESKTOP) -> None:
    with sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page(viewport=viewport)
        page.goto(url)
        say(page, "Add buy milk")
        say(page, "Add call the plumbr")
        edited = page.locator(".msg.user", has_text="call the plumbr")
        edited.get_by_role("button", name="Edit this message and send it again").click()
        page.get_by_label("Edited message").fill("Add call the plumber")
        page.get_by_label("Edited message").press("Enter")
        expect(page.locator(".msg.user .branch-place")).to_have_text("2/2")
        expect(page.locator("#send")).to_be_enabled()
        say(page, "Add book the dentist")
        dentist = page.locator(".msg.user", has_text="book the dentist")
        dentist.get_by_role("button", name="Edit this message and send it again").click()
        page.get_by_label("Edited message").fill("Add book the dentist for Tuesday")
        page.mouse.move(0, 0)
        path.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(path))
        browser.close()


def main(argv: list[str]) -> None:
    options = set(argv[1:])
    known = {"--dark", "--phone", "--edit"}
    if not argv or len(options) != len(argv) - 1 or not options <= known:
        sys.exit("usage: python -m tests.e2e.screenshot OUTPUT.png [--dark] [--phone] [--edit]")
    scheme = "dark" if "--dark" in options else "light"
    viewport = PHONE if "--phone" in options else DESKTOP
    with tempfile.TemporaryDirectory(prefix="keel-shot-") as tmp:
        with keel_server(f"sqlite:///{Path(tmp) / 'keel.db'}") as server:
            if "--edit" in options:
                edits(f"{server.url}/", Path(argv[0]), viewport)
            else:
                session(f"{server.url}/", Path(argv[0]), scheme, viewport)


if __name__ == "__main__":
    main(sys.argv[1:])
