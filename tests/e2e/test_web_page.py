"""The chat page at / in a real Chromium (Playwright) against a real `keel serve`.

One whole session with the rule-based model (tasks, a confirmation answered with the buttons,
topics, reset, reload, a second conversation, the lists used by keyboard), the API key prompt and
another user's conversation, a message keel was too busy to take sent again, the folded panels
and a confirmation at phone width, and, on a scripted slow model, the Stop button, a stop that
cannot reach the turn, a reload and a dropped connection while a turn runs. Every request the
page makes stays on keel's own origin.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import (
    Browser,
    ConsoleMessage,
    Locator,
    Page,
    Request,
    Route,
    expect,
)

from tests.integration.server import Server, keel_server, keel_server_with_model
from tests.stub_openai import StubOpenAI

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
NOT_FOUND = "That conversation was not found"


def launch(playwright) -> Browser:
    """Debian's Chromium, headless, with nothing of its own going to the network."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} not found: install it with `apt-get install -y chromium`")
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)


@pytest.fixture
def server(tmp_path) -> Iterator[Server]:
    with keel_server(f"sqlite:///{tmp_path / 'keel.db'}") as server:
        yield server


def record_requests(page: Page) -> list[str]:
    """The URL of every request the page makes, from now on."""
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))
    return urls


def record_errors(page: Page) -> list[str]:
    """Script errors and console errors (a CSP violation is one), from now on."""
    errors: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            errors.append(message.text)

    page.on("console", on_console)
    page.on("pageerror", lambda error: errors.append(str(error)))
    return errors


def conversation_id(page: Page) -> str:
    return parse_qs(urlparse(page.url).query)["c"][0]


ANSWERED = """(before) => document.querySelectorAll('.msg.assistant:not(.streaming)').length
    > before || !document.getElementById('confirm').hidden"""


def say(page: Page, text: str) -> Locator:
    """Type ``text`` and press Enter; wait until the answer is complete (a reply bubble, or the
    confirmation card, which asks its question alone); the last reply bubble.
    """  # noqa: D205
    expect(page.locator("#send")).to_be_enabled()  # the turn before has ended
    replies = page.locator(".msg.assistant")
    before = replies.count()
    page.locator("#message").fill(text)
    page.locator("#message").press("Enter")
    page.wait_for_function(ANSWERED, arg=before)
    expect(page.locator("#send")).to_be_enabled()
    return replies.last


def blank(page: Page) -> None:
    """Wait for the blank page of a new conversation (none is made before its first message)."""
    expect(page.locator("#messages")).to_contain_text("Say hello")
    expect(page.locator(".chat-head h2")).to_have_text("New conversation")


def task(page: Page, title: str) -> Locator:
    return page.locator("#tasks .task", has_text=title)


def topic(page: Page, title: str) -> Locator:
    """The Topics panel's entry titled ``title`` (not one whose summary mentions it)."""
    return page.locator("#topics .topic").filter(has=page.locator(".nav-title", has_text=title))


def focus_and_enter(entry: Locator) -> None:
    """Choose a list entry with the keyboard."""
    entry.focus()
    entry.press("Enter")


def is_message_post(request: Request) -> bool:
    return request.method == "POST" and request.url.endswith("/messages")


def enter_key(page: Page, key: str) -> None:
    expect(page.locator("#api-key")).to_be_visible()
    page.get_by_label("API key", exact=True).fill(key)
    page.locator("#api-key-submit").click()


def test_a_whole_session_in_the_browser(browser: Browser, server: Server):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    requests = record_requests(page)
    errors = record_errors(page)
    page.goto(f"{server.url}/")

    # A blank conversation, made at its first message, its id then put in the address; no key is
    # asked for.
    blank(page)
    expect(page.locator("#api-key")).to_be_hidden()
    assert page.request.get(f"{server.url}/v1/conversations").json() == []

    expect(say(page, "Add buy milk")).to_have_text("keel: Created task: buy milk")
    expect(page).to_have_url(re.compile(r"\?c=[0-9a-f-]{36}$"))
    first = conversation_id(page)
    expect(task(page, "buy milk")).to_have_count(1)
    # A task is a mark, not a control: nothing to tick; its state is words for screen readers.
    expect(page.locator("#tasks input, #tasks [role=checkbox]")).to_have_count(0)
    expect(task(page, "buy milk").locator(".visually-hidden")).to_have_text("(open)")
    expect(page.locator("#mission")).to_have_text("Add buy milk")
    expect(page.locator("#plan .plan-item.done")).to_have_count(1)
    created = page.locator(".event.tool", has_text="Created task 1: buy milk")
    expect(created).to_be_visible()
    expect(created.locator(".tool-detail")).to_be_hidden()  # folded until asked for
    created.locator("summary").click()
    expect(created.locator(".tool-detail")).to_contain_text("create_todo_task(title: buy milk)")
    expect(page.locator(".event", has_text="Starting new query")).to_have_count(0)

    listed = say(page, "What's on my list?")
    expect(listed.locator(".text .line")).to_have_text("Your tasks:")  # the Markdown drawn:
    expect(listed.locator(".reply-list li.open")).to_have_text(re.compile(r"1\. buy milk$"))

    # A destructive step waits for a yes: the Yes button answers it.
    say(page, "Delete task 1")
    expect(page.locator("#confirm-prompt")).to_have_text("Delete task 1 - buy milk?")
    # The question is asked once, by the card, not again in a bubble.
    expect(page.locator(".msg.assistant", has_text="Are you sure")).to_have_count(0)
    page.locator("#confirm-yes").click()
    expect(page.locator(".msg.user .text").last).to_have_text("yes")
    expect(page.locator(".msg.assistant").last).to_have_text("keel: Deleted task 1: buy milk")
    expect(page.locator("#confirm")).to_be_hidden()
    expect(task(page, "buy milk")).to_have_count(0)

    # ... and No keeps the task.
    say(page, "Add call the plumber")
    plumber = task(page, "call the plumber")
    expect(plumber).to_have_count(1)
    number = plumber.get_attribute("data-id")
    say(page, f"Delete task {number}")
    expect(page.locator("#confirm")).to_be_visible()
    page.locator("#confirm-no").click()
    expect(page.locator(".msg.user .text").last).to_have_text("no")
    expect(page.locator("#confirm")).to_be_hidden()
    expect(page.locator("#send")).to_be_enabled()
    expect(plumber).to_have_count(1)
    # Nothing in the chat suggests the delete ran, live or after a reload.
    deleted = page.locator(".event.tool", has_text=f"Deleted task {number}")
    expect(deleted).to_have_count(0)
    expect(page.locator(".msg.assistant").last).to_contain_text("was not deleted")
    page.reload()
    expect(page.locator(".msg.user .text").last).to_have_text("no")
    expect(page.locator(".event.tool", has_text="Created task 1: buy milk")).to_have_count(1)
    expect(deleted).to_have_count(0)
    expect(page.locator(".event.tool", has_text="Deleted task 1: buy milk")).to_have_count(1)
    say(page, f"Complete task {number}")
    expect(plumber).to_have_class(re.compile(r"\bcompleted\b"))
    expect(plumber.locator(".visually-hidden")).to_have_text("(done)")

    # A new topic shows in the log and in the Topics panel.
    say(page, "Let's discuss the garden plans")
    expect(page.locator(".event", has_text="New topic: Garden plans")).to_be_visible()
    expect(page.locator("#topics .topic")).to_have_count(2)
    expect(topic(page, "Garden plans")).to_have_class(re.compile(r"\bactive\b"))
    say(page, f"Delete task {number}")  # a question left waiting in this topic
    expect(page.locator("#confirm")).to_be_visible()

    # An earlier topic, chosen with Enter: its messages alone, a banner, and the way back to it;
    # the redrawn list keeps the keyboard focus on the entry.
    focus_and_enter(topic(page, "Add buy milk"))
    expect(page.locator("#topic-banner")).to_be_visible()
    expect(page.locator("#topic-banner-title")).to_have_text("Add buy milk")
    expect(topic(page, "Add buy milk")).to_have_attribute("aria-current", "true")
    expect(topic(page, "Add buy milk")).to_be_focused()
    expect(page.locator("#confirm")).to_be_hidden()
    expect(page.locator(".msg.user .text").first).to_have_text("Add buy milk")
    expect(page.locator(".msg.user .visually-hidden").first).to_have_text("You: ")  # read aloud
    expect(page.locator(".msg.user", has_text="garden")).to_have_count(0)
    with page.expect_response(lambda r: r.url.endswith("/reopen")) as reopened:
        page.locator("#reopen-topic").click()
    assert reopened.value.status == 200
    back = reopened.value.json()["message"]
    assert "dropped" in back  # the question waiting in the other topic
    expect(page.locator(".event.notice").last).to_have_text(back)
    expect(page.locator("#confirm")).to_be_hidden()
    expect(page.locator("#topic-banner")).to_be_hidden()
    expect(topic(page, "Add buy milk")).to_have_class(re.compile(r"\bactive\b"))
    expect(topic(page, "garden")).not_to_have_class(re.compile(r"\bactive\b"))
    expect(page.locator(".msg.user", has_text="garden")).to_have_count(1)  # the whole log again

    # Sending while an earlier topic is shown goes to the active topic: the page shows the whole
    # conversation first, where the message lands.
    topic(page, "garden").click()
    expect(page.locator("#topic-banner-title")).to_have_text("Garden plans")
    page.locator("#message").fill("What's on my list?")
    page.locator("#message").press("Enter")
    expect(page.locator("#topic-banner")).to_be_hidden()
    expect(page.locator(".msg.user .text").first).to_have_text("Add buy milk")
    expect(page.locator(".msg.user .text").last).to_have_text("What's on my list?")
    expect(page.locator(".msg.assistant").last).to_contain_text("call the plumber")
    expect(page.locator("#send")).to_be_enabled()
    expect(topic(page, "Add buy milk")).to_have_class(re.compile(r"\bactive\b"))

    # /reset typed in the box resets (it is not sent as a message) and starts a topic.
    users_before = page.locator(".msg.user").count()
    page.locator("#message").fill("/reset")
    page.locator("#message").press("Enter")
    expect(page.locator(".event.notice", has_text="reset")).to_be_visible()
    expect(page.locator("#topics .topic")).to_have_count(3)
    expect(page.locator(".msg.user")).to_have_count(users_before)

    # A reload opens the same conversation with its history.
    page.reload()
    expect(page).to_have_url(re.compile(rf"\?c={first}$"))
    expect(page.locator(".msg.user .text").first).to_have_text("Add buy milk")
    expect(page.locator(".msg.assistant", has_text="Deleted task 1: buy milk")).to_have_count(1)
    expect(page.locator("#topics .topic")).to_have_count(3)
    # ... and draws the topic lines as they were: the return to a topic is told as it was live.
    expect(page.locator(".event.divider", has_text="New topic: Garden plans")).to_have_count(1)
    expect(page.locator(".event.notice", has_text=back)).to_have_count(1)
    expect(page.locator(".event", has_text="Back to the topic: Add buy milk")).to_have_count(1)

    # A second conversation, then back to the first from the list (with Enter). Each entry is
    # titled by its first message and shows its latest below; a new one is a blank page, "New
    # conversation", listed once it has a message.
    page.locator("#new-conversation").click()
    expect(page).not_to_have_url(re.compile(rf"\?c={first}$"))
    expect(page.locator(".chat-head h2")).to_have_text("New conversation")
    expect(page.locator("#conversations li")).to_have_count(1)
    expect(page.locator(".msg")).to_have_count(0)
    entry = page.locator(f'#conversations [data-id="{first}"]')
    listed = {
        c["conversation_id"]: c for c in page.request.get(f"{server.url}/v1/conversations").json()
    }
    assert listed[first]["title"] == "Add buy milk"
    expect(entry.locator(".nav-title")).to_have_text("Add buy milk")
    expect(entry.locator(".nav-preview")).to_have_text(listed[first]["preview"])
    named = page.locator("#conversations .conversation", has_text="Add buy milk")
    expect(named).to_have_count(1)
    focus_and_enter(entry)
    expect(page).to_have_url(re.compile(rf"\?c={first}$"))
    expect(page.locator(".msg.user .text").first).to_have_text("Add buy milk")
    expect(entry).to_have_attribute("aria-current", "true")
    expect(entry).to_be_focused()

    assert requests
    elsewhere = [url for url in requests if not url.startswith(server.url)]
    assert not elsewhere, elsewhere
    assert not errors, errors


def test_api_keys_are_asked_for_and_conversations_stay_private(browser: Browser, tmp_path):
    keys = "ann:key-ann,bob:key-bob"
    with keel_server(f"sqlite:///{tmp_path / 'keel.db'}", KEEL_API_KEYS=keys) as server:
        ann = browser.new_context().new_page()
        requests = record_requests(ann)
        ann.goto(f"{server.url}/")
        enter_key(ann, "not-a-key")
        expect(ann.locator("#key-error")).to_contain_text("not accepted")
        enter_key(ann, "key-ann")
        expect(ann.locator("#api-key")).to_be_hidden()
        blank(ann)
        expect(say(ann, "Add ann's secret plan")).to_have_text(
            "keel: Created task: ann's secret plan"
        )
        expect(ann).to_have_url(re.compile(r"\?c=[0-9a-f-]{36}$"))
        anns = conversation_id(ann)

        # The key lasts for the tab: a reload does not ask again.
        ann.reload()
        expect(ann.locator(".msg.user .text")).to_have_text(["Add ann's secret plan"])
        expect(ann.locator("#api-key")).to_be_hidden()

        bob = browser.new_context().new_page()
        requests += record_requests(bob)
        bob.goto(f"{server.url}/?c={anns}")
        enter_key(bob, "key-bob")
        expect(bob.locator("#status")).to_have_text(NOT_FOUND)
        expect(bob.locator("#messages")).to_contain_text(NOT_FOUND)
        expect(bob.locator("#conversations")).to_contain_text("No conversations yet")
        expect(bob.locator(".msg")).to_have_count(0)
        assert "secret plan" not in bob.content()

        # Bob can still start his own conversation from there.
        bob.locator("#new-conversation").click()
        expect(bob).not_to_have_url(re.compile(anns))
        blank(bob)
        expect(say(bob, "What's on my list?")).not_to_contain_text("secret")
        expect(bob).to_have_url(re.compile(r"\?c=[0-9a-f-]{36}$"))
        expect(bob.locator("#tasks .task")).to_have_count(0)

    elsewhere = [url for url in requests if not url.startswith(server.url)]
    assert not elsewhere, elsewhere


def test_a_bad_id_and_a_refused_message_are_told_in_plain_words(browser: Browser, tmp_path):
    with keel_server(f"sqlite:///{tmp_path / 'keel.db'}", KEEL_MAX_MESSAGE_CHARS="40") as server:
        page = browser.new_page()
        page.goto(f"{server.url}/?c=not-a-conversation")
        expect(page.locator("#status")).to_have_text(NOT_FOUND)
        # Typing still works: it starts a fresh conversation.
        expect(say(page, "Add buy bread")).to_have_text("keel: Created task: buy bread")
        expect(page).to_have_url(re.compile(r"\?c=[0-9a-f-]{36}$"))

        too_long = "Add " + " and ".join(["a very long task"] * 5)
        page.locator("#message").fill(too_long)
        page.locator("#message").press("Enter")
        expect(page.locator("#status")).to_have_text("That message is too long.")
        expect(page.locator("#message")).to_have_value(too_long)  # kept, to be shortened
        expect(page.locator(".msg.user")).to_have_count(1)
        expect(page.locator("#send")).to_be_enabled()


LOG_AT_ITS_END = """() => {
    const log = document.getElementById("messages");
    return log.scrollHeight > log.clientHeight
        && log.scrollHeight - log.scrollTop - log.clientHeight < 2;
}"""
"""The message log overflows and is scrolled to its end."""


def test_at_phone_width_the_panels_fold_behind_toggles(browser: Browser, server: Server):
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(f"{server.url}/")
    blank(page)
    expect(page.locator("#sidebar")).to_be_hidden()
    expect(page.locator("#details")).to_be_hidden()
    for text in ["Add buy milk", "Add call the plumber", "Add water the plants", "List"]:
        say(page, text)

    # The Yes/No card takes room from the log, which stays at its end; the card names the task.
    say(page, "Delete task 1")
    expect(page.locator("#confirm")).to_be_visible()
    page.wait_for_function(LOG_AT_ITS_END, timeout=5000)
    expect(page.locator("#confirm-prompt")).to_have_text("Delete task 1 - buy milk?")
    expect(page.locator("#confirm")).to_be_in_viewport()
    expect(page.locator(".msg.user").last).to_be_in_viewport()

    # An open panel covers the chat, which is inert meanwhile (Tab cannot reach it).
    page.locator("#toggle-details").click()
    expect(page.locator("#toggle-details")).to_have_attribute("aria-expanded", "true")
    expect(task(page, "buy milk")).to_be_visible()
    expect(page.locator("#chat")).to_have_js_property("inert", True)
    page.locator("#message").focus()
    expect(page.locator("#message")).not_to_be_focused()
    page.locator("#toggle-details").click()
    expect(page.locator("#details")).to_be_hidden()
    expect(page.locator("#chat")).to_have_js_property("inert", False)

    page.locator("#toggle-sidebar").click()
    expect(page.locator("#chat")).to_have_js_property("inert", True)
    page.keyboard.press("Escape")
    expect(page.locator("#sidebar")).to_be_hidden()
    expect(page.locator("#toggle-sidebar")).to_be_focused()
    expect(page.locator("#chat")).to_have_js_property("inert", False)

    page.locator("#toggle-sidebar").click()
    expect(page.locator("#topics .topic")).to_have_count(1)
    page.locator("#new-conversation").click()  # picking closes the panel
    expect(page.locator("#sidebar")).to_be_hidden()
    expect(page.locator("#chat")).to_have_js_property("inert", False)
    expect(page.locator(".msg")).to_have_count(0)
    expect(page.locator("#message")).to_be_visible()


def on_screen(page: Page, words: str) -> int:
    """How many times ``words`` show in the log (what a folded tool line hides does not)."""
    return page.locator("#messages").inner_text().count(words)


def test_a_due_date_is_read_in_the_browsers_time_zone_and_shown_beside_the_task(
    browser: Browser, server: Server
):
    page = browser.new_page(viewport=DESKTOP, timezone_id="Asia/Tokyo")
    page.goto(f"{server.url}/")
    blank(page)
    made = say(page, "remind me to call the dentist tomorrow at 9am")
    expect(made).to_contain_text("Created task: call the dentist (due ")
    expect(made).to_contain_text(" 09:00)")  # nine in Tokyo, whatever the server's zone
    expect(task(page, "call the dentist").locator(".task-due")).to_have_text(
        re.compile(r"^\w+, \w+ \d+, 09:00$")
    )
    listed = say(page, "What's due tomorrow?")
    item = listed.locator(".reply-list li.open")
    expect(item).to_contain_text("1. call the dentist")
    expect(item.locator(".due")).to_have_text(re.compile(r"due \w+ \d+ \w+ \d{4} 09:00$"))
    tasks = page.request.get(f"{server.url}/v1/tasks?timezone=Asia/Tokyo").json()
    assert tasks[0]["title"] == "call the dentist" and tasks[0]["due"].endswith("T09:00+09:00")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_task_that_is_not_there_is_told_once_by_its_tool_line(
    browser: Browser, server: Server, viewport
):
    page = browser.new_page(viewport=viewport)
    page.goto(f"{server.url}/")
    blank(page)
    error = "Error: Task 99 not found."
    for text in ["Show task 99", "Delete task 99"]:
        page.locator("#message").fill(text)
        page.locator("#message").press("Enter")
        expect(page.locator(".msg.user .text").last).to_have_text(text)
        expect(page.locator(".event.tool summary").last).to_have_text(error)
        expect(page.locator("#send")).to_be_enabled()
        expect(page.locator(".msg.assistant")).to_have_count(0)  # no bubble saying it again
        expect(page.locator("#confirm")).to_be_hidden()
    assert on_screen(page, "Task 99 not found") == 2  # once for each message
    page.reload()
    expect(page.locator(".event.tool summary")).to_have_text([error, error])
    expect(page.locator(".msg.assistant")).to_have_count(0)
    assert on_screen(page, "Task 99 not found") == 2


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_word_on_why_beside_a_delete_gets_no_line_of_its_own(
    browser: Browser, server: Server, viewport
):
    page = browser.new_page(viewport=viewport)
    page.goto(f"{server.url}/")
    say(page, "Add buy milk")
    say(page, "Delete buy milk, it was a typo")
    expect(page.locator("#confirm")).to_be_visible()
    page.locator("#confirm-yes").click()
    expect(page.locator(".msg.user .text").last).to_have_text("yes")
    expect(page.locator(".msg.assistant").last).to_have_text("keel: Deleted task 1: buy milk")
    keels = page.locator("#messages .msg.assistant, #messages .event")
    expect(keels.filter(has_text="typo")).to_have_count(0)  # only the user's own words hold it
    expect(keels.filter(has_text="couldn't find")).to_have_count(0)
    page.reload()
    expect(page.locator(".msg.assistant").last).to_have_text("keel: Deleted task 1: buy milk")
    expect(keels.filter(has_text="typo")).to_have_count(0)
    expect(keels.filter(has_text="couldn't find")).to_have_count(0)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_reset_is_still_shown_where_it_happened_after_a_reload(
    browser: Browser, server: Server, viewport
):
    page = browser.new_page(viewport=viewport)
    page.goto(f"{server.url}/")
    say(page, "Add buy milk")
    page.locator("#reset").click()
    notices = page.locator(".event.notice", has_text="reset")
    expect(notices).to_have_count(1)
    say(page, "Add eggs")
    page.reload()
    expect(page.locator(".msg.user .text")).to_have_text(["Add buy milk", "Add eggs"])
    expect(notices).to_have_count(1)
    lines = page.locator("#messages > li").all_inner_texts()
    at = next(i for i, line in enumerate(lines) if "has been reset" in line)
    assert "Created task: buy milk" in lines[at - 1] and "Add eggs" in lines[at + 1], lines

    page.locator("#message").fill("/reset")  # typed, it is the same reset
    page.locator("#message").press("Enter")
    expect(notices).to_have_count(2)
    page.reload()
    expect(notices).to_have_count(2)
    expect(page.locator("#messages > li").last).to_have_class(re.compile(r"\bnotice\b"))
    expect(page.locator(".event.divider")).to_have_count(0)  # the notices tell the new topics


def test_a_message_is_offered_again_only_when_keel_did_not_take_it(
    browser: Browser, server: Server
):
    page = browser.new_page()
    page.goto(f"{server.url}/")
    blank(page)
    refused: list[Request] = []

    def busy_once(route: Route) -> None:
        if route.request.method != "POST" or refused:
            return route.continue_()
        refused.append(route.request)
        body = {"error": {"code": "database_unavailable", "message": "the database is busy"}}
        route.fulfill(status=503, json=body, headers={"Retry-After": "1"})

    page.route(lambda url: url.endswith("/messages"), busy_once)
    page.locator("#message").fill("Add buy milk")
    page.locator("#message").press("Enter")
    expect(page.locator("#status")).to_have_text("keel is busy; try again shortly.")
    expect(page.locator("#message")).to_have_value("Add buy milk")  # not taken: given back
    expect(page.locator(".msg.user")).to_have_count(0)
    with page.expect_request(is_message_post) as again:
        page.locator("#status-action", has_text="Try again").click()
    assert again.value.headers["idempotency-key"] == refused[0].headers["idempotency-key"]
    expect(page.locator(".msg.assistant")).to_have_text(["keel: Created task: buy milk"])
    expect(page.locator("#message")).to_have_value("")
    expect(page.locator("#status")).to_have_text("")
    expect(page.locator("#send")).to_be_enabled()  # the reply streams in before its turn ends

    # A turn keel took and that failed (an error frame after a 200): the page waits until no turn
    # runs, shows what was saved and the failure, and offers nothing to send again.
    failed = {"error": {"code": "turn_failed", "message": "the turn failed; nothing was lost"}}
    page.unroute_all()
    page.route(
        lambda url: url.endswith("/messages"),
        lambda route: (
            route.fulfill(
                status=200,
                content_type="text/event-stream",
                body=f"event: error\ndata: {json.dumps(failed)}\n\n",
            )
            if route.request.method == "POST"
            else route.continue_()
        ),
    )
    page.locator("#message").fill("Add buy bread")
    page.locator("#message").press("Enter")
    expect(page.locator("#status")).to_have_text(re.compile(r"^The answer failed"))
    expect(page.locator("#status-action")).to_be_hidden()
    expect(page.locator("#message")).to_have_value("")
    expect(page.locator(".msg.user .text")).to_have_text(["Add buy milk"])  # the saved log
    expect(page.locator("#send")).to_be_enabled()


@pytest.fixture
def model_server(tmp_path) -> Iterator[tuple[Server, StubOpenAI]]:
    """keel on a scripted OpenAI-compatible model, whose answers can be made slow."""
    with keel_server_with_model(f"sqlite:///{tmp_path / 'keel.db'}") as (server, stub):
        yield server, stub


def wait_for_model_requests(stub: StubOpenAI, count: int, page: Page) -> None:
    """Until the model has been asked ``count`` times (polling through the page's own waits)."""
    for _ in range(600):
        if len(stub.requests) >= count:
            return
        page.wait_for_timeout(50)
    pytest.fail(f"the model was asked {len(stub.requests)} times, not {count}")


def test_the_stop_button_ends_a_running_turn(browser: Browser, model_server):
    server, stub = model_server
    stub.reply("Chores")  # the topic's title
    stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": "sweep the porch"}}])
    stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": "wash the car"}}])
    stub.delays[2] = 4.0  # the model is slow to ask for the second task
    page = browser.new_page()
    page.goto(f"{server.url}/")
    blank(page)
    page.locator("#message").fill("Two chores")
    page.locator("#message").press("Enter")
    expect(page.locator("#stop")).to_be_visible()
    expect(page.locator("#send")).to_be_disabled()
    expect(
        page.locator(".event", has_text="create_todo_task(title: sweep the porch)")
    ).to_be_visible()
    wait_for_model_requests(stub, 3, page)
    with page.expect_response(lambda r: r.url.endswith("/cancel")) as cancelled:
        page.locator("#stop").click()
    assert cancelled.value.json() == {"running": True, "cancel_requested": True}
    expect(page.locator(".msg.assistant").last).to_contain_text("Stopped at your request")
    expect(page.locator(".event", has_text="Stopped")).to_have_count(1)
    expect(page.locator("#stop")).to_be_hidden()
    expect(page.locator("#status")).to_have_text("")  # no "Stopping…" left behind
    expect(page.locator("#send")).to_be_enabled()
    expect(page.locator("#tasks .task")).to_have_count(1)
    expect(task(page, "sweep the porch")).to_have_count(1)


def slow_porch_turn(stub: StubOpenAI) -> None:
    """A turn that adds a task, then is slow to say so: time to act while it runs."""
    stub.reply("Chores")  # the topic's title
    stub.reply(tool_calls=[{"name": "create_todo_task", "args": {"title": "sweep the porch"}}])
    stub.reply("The porch is on the list.\nKEEL DONE: noted")
    stub.delays[2] = 3.0


def test_a_stop_that_cannot_reach_the_turn_says_so(browser: Browser, model_server):
    server, stub = model_server
    slow_porch_turn(stub)
    page = browser.new_page()
    # The turn runs in another worker process: the cancel does not reach it.
    elsewhere = {"running": True, "cancel_requested": False}
    page.route(lambda url: url.endswith("/cancel"), lambda route: route.fulfill(json=elsewhere))
    page.goto(f"{server.url}/")
    blank(page)
    page.locator("#message").fill("Sweep the porch")
    page.locator("#message").press("Enter")
    expect(
        page.locator(".event", has_text="create_todo_task(title: sweep the porch)")
    ).to_be_visible()
    page.locator("#stop").click()
    expect(page.locator("#status")).to_have_text(
        "Could not stop it from here; it will finish on its own."
    )
    expect(page.locator(".msg.assistant")).to_have_text(["keel: The porch is on the list."])
    expect(page.locator("#status")).to_have_text("")
    expect(page.locator("#stop")).to_be_hidden()


BREAK_THE_STREAM = """
// The connection of each message's stream drops once its first bytes are read.
const realFetch = window.fetch;
window.fetch = async (input, init) => {
    const response = await realFetch(input, init);
    const post = init && init.method === "POST" && String(input).endsWith("/messages");
    if (!post || !response.ok) return response;
    const reader = response.body.getReader();
    let read = false;
    const body = new ReadableStream({
        async pull(controller) {
            if (read) {
                await reader.cancel();
                return controller.error(new TypeError("network error"));
            }
            const { value, done } = await reader.read();
            if (done) return controller.close();
            read = true;
            controller.enqueue(value);
        },
    });
    return new Response(body, { status: response.status, headers: response.headers });
};
"""


def test_a_connection_dropped_mid_turn_waits_for_the_turn_and_never_sends_twice(
    browser: Browser, model_server
):
    server, stub = model_server
    slow_porch_turn(stub)
    page = browser.new_page()
    page.add_init_script(BREAK_THE_STREAM)
    posts: list[Request] = []
    page.on("request", lambda request: posts.append(request) if is_message_post(request) else None)
    page.goto(f"{server.url}/")
    blank(page)
    page.locator("#message").fill("Sweep the porch")
    page.locator("#message").press("Enter")
    # keel took the message: the page waits for the turn instead of offering to send it again.
    expect(page.locator("#status")).to_have_text("Still answering…")
    expect(page.locator("#status-action")).to_be_hidden()
    expect(page.locator("#send")).to_be_disabled()
    expect(page.locator("#message")).to_have_value("")
    expect(page.locator(".msg.user .text")).to_have_text(["Sweep the porch"])
    # Once it ends, what was saved is shown.
    expect(page.locator(".msg.assistant")).to_have_text(["keel: The porch is on the list."])
    expect(page.locator("#status")).to_have_text("")
    expect(page.locator("#status-action")).to_be_hidden()
    expect(page.locator("#send")).to_be_enabled()
    expect(task(page, "sweep the porch")).to_have_count(1)
    assert len(posts) == 1
    assert len(stub.requests) == 3  # the turn ran once


def test_a_reload_during_a_turn_waits_for_its_answer(browser: Browser, model_server):
    server, stub = model_server
    stub.reply("Groceries")  # the topic's title
    stub.reply("Milk is on the list.\nKEEL DONE: noted")
    stub.delays[1] = 4.0  # slow enough to reload the page meanwhile
    page = browser.new_page()
    page.goto(f"{server.url}/")
    blank(page)
    page.locator("#message").fill("Remember the milk")
    page.locator("#message").press("Enter")
    wait_for_model_requests(stub, 2, page)
    page.reload()
    expect(page.locator("#status")).to_have_text("Still answering…")
    expect(page.locator("#send")).to_be_disabled()
    expect(page.locator(".msg.user .text")).to_have_text(["Remember the milk"])
    expect(page.locator(".msg.assistant")).to_have_text(["keel: Milk is on the list."])
    expect(page.locator("#status")).to_have_text("")
    expect(page.locator("#send")).to_be_enabled()
