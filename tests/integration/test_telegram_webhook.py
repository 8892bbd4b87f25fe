"""`keel serve` taking Telegram's updates at /telegram/webhook: what Telegram and others see.

A Bot API that cannot be reached makes an update a prompt 503 that Telegram sends again; an update
Telegram sends again while the first delivery is still answered is neither run nor answered twice;
a server with API keys but no webhook reads no body at that path.
"""

from __future__ import annotations

import signal
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import httpx
import pytest

from tests.integration.server import free_port, keel_server, stop
from tests.integration.test_telegram import ANN
from tests.stub_openai import StubOpenAI
from tests.stub_telegram import StubTelegram

SECRET = "webhook-secret_1"
RIGHT = {"X-Telegram-Bot-Api-Secret-Token": SECRET}


def webhook_env(token: str, api_url: str) -> dict[str, str]:
    return {
        "KEEL_TELEGRAM_TOKEN": token,
        "KEEL_TELEGRAM_API_URL": api_url,
        "KEEL_TELEGRAM_WEBHOOK_SECRET": SECRET,
    }


@contextmanager
def silent_bot_api() -> Iterator[tuple[str, list[socket.socket]]]:
    """A Bot API that takes connections and never answers; its URL and the connections."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def take() -> None:
        while True:
            try:
                held.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=take, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", held
    finally:
        listener.close()
        for conn in held:
            conn.close()


@contextmanager
def unreachable_bot_api(how: str) -> Iterator[tuple[str, list[socket.socket]]]:
    if how == "refused":
        yield f"http://127.0.0.1:{free_port()}", []
    else:
        with silent_bot_api() as found:
            yield found


def update(message_id: int) -> dict:
    message = {
        "message_id": message_id,
        "date": int(time.time()),
        "chat": {"id": ANN, "type": "private", "first_name": "ann"},
        "from": {"id": ANN, "is_bot": False, "first_name": "ann"},
        "text": "Add buy milk",
    }
    return {"update_id": 7, "message": message}


@pytest.mark.parametrize("how", ["refused", "silent"])
def test_an_unreachable_bot_api_is_a_prompt_503_and_a_prompt_stop(tmp_path, how):
    with (
        unreachable_bot_api(how) as (api_url, held),
        keel_server(f"sqlite:///{tmp_path / 'k.db'}", **webhook_env("42:x", api_url)) as server,
    ):
        endpoint = f"{server.url}/telegram/webhook"
        answer = httpx.post(endpoint, json=update(1), headers=RIGHT, timeout=60)
        assert answer.status_code == 503, answer.text
        assert answer.headers["retry-after"]
        assert answer.json()["error"]["code"] == "telegram_unavailable"
        with ThreadPoolExecutor(1) as pool:
            pending = pool.submit(httpx.post, endpoint, json=update(2), headers=RIGHT, timeout=60)
            time.sleep(1)  # the update is under way, waiting for the Bot API
            stop(server.process)  # SIGTERM; killed when it has not stopped in 20 s
            assert server.process.returncode != -signal.SIGKILL  # it stopped by itself
            try:
                status = pending.result().status_code
            except httpx.HTTPError:  # cut off by the stop
                status = None
            assert status in (503, None)


def test_an_update_sent_again_while_it_is_answered_is_answered_once(tmp_path):
    with StubTelegram() as telegram, StubOpenAI() as model:
        model.always("Noted: buy milk.")
        model.delays = {0: 6.0}
        env = {
            **webhook_env(telegram.token, telegram.url),
            "KEEL_OPENAI_API_KEY": "test-key",
            "KEEL_OPENAI_BASE_URL": model.base_url,
        }
        with keel_server(f"sqlite:///{tmp_path / 'k.db'}", **env) as server:
            endpoint = f"{server.url}/telegram/webhook"
            with ThreadPoolExecutor(1) as pool:
                first = pool.submit(httpx.post, endpoint, json=update(1), headers=RIGHT, timeout=60)
                telegram.wait(lambda: model.requests)  # the turn runs
                again = httpx.post(endpoint, json=update(1), headers=RIGHT, timeout=60)
                assert again.status_code == 503 and again.headers["retry-after"]
                assert again.json()["error"]["code"] == "telegram_update_under_way"
                assert first.result().status_code == 200
            asked = len(model.requests)
            later = httpx.post(endpoint, json=update(1), headers=RIGHT, timeout=60)
            assert later.status_code == 200
            replies = [m["text"] for m in telegram.replies(ANN)]
            assert len(replies) == 1 and replies[0].startswith("Noted: buy milk.")
            assert len(model.requests) == asked  # not run again


def test_no_body_is_read_at_the_webhook_path_of_a_server_without_a_webhook(tmp_path):
    with keel_server(f"sqlite:///{tmp_path / 'k.db'}", KEEL_API_KEYS="ann:key-1") as server:
        port = int(server.url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
            conn.sendall(
                b"POST /telegram/webhook HTTP/1.1\r\nHost: keel\r\n"
                b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"
            )
            head = conn.recv(200).decode()  # answered before the body came (10 s at most)
        assert head.split(" ")[1] in ("401", "404")
