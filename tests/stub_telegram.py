"""A local Telegram Bot API server for tests: the methods keel's bot calls, over real HTTP.

Requests go to ``{url}/bot{token}/{method}`` as on the real server (a wrong token is a 401).
The test queues updates as people would cause them (``say``, ``press``), and reads what the bot
did (``sent``, ``actions``, ``answers``, ``edits``, ``calls``). Updates are confirmed the way
Telegram confirms them: a getUpdates with ``offset`` drops those it delivered before whose ids are
below it; ``forget_offset`` makes the server deliver every update again, as after a bot that never
confirmed them; ``renumber`` numbers the next updates from another id, as Telegram does (at
random) after a week without updates. ``fail`` queues error answers for a method (a 429 with
``retry_after``, a 502).
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl

BOT = {
    "id": 4242,
    "is_bot": True,
    "first_name": "keel",
    "username": "keel_test_bot",
    "can_join_groups": True,
    "can_read_all_group_messages": False,
    "supports_inline_queries": False,
}
JSON_FIELDS = ("reply_markup", "reply_parameters", "allowed_updates", "commands")


def person(user_id: int) -> dict[str, Any]:
    return {"id": user_id, "is_bot": False, "first_name": f"user{user_id}"}


def too_many_requests(seconds: int) -> tuple[int, dict[str, Any]]:
    return 429, {
        "ok": False,
        "error_code": 429,
        "description": f"Too Many Requests: retry after {seconds}",
        "parameters": {"retry_after": seconds},
    }


BAD_GATEWAY = (502, {"ok": False, "error_code": 502, "description": "Bad Gateway"})


class StubTelegram:
    """The Bot API of one bot, in a thread of the test process."""

    def __init__(self, token: str = "4242:stub-secret-token") -> None:
        self.token = token
        self.updates: list[dict[str, Any]] = []
        """Every update people caused, in order."""
        self.pending: list[dict[str, Any]] = []
        """The updates not confirmed yet."""
        self.delivered: set[int] = set()
        """The pending updates getUpdates returned (by object identity: ids may repeat)."""
        self.sent: list[dict[str, Any]] = []
        """Every message the bot sent: chat_id, text, reply_to, buttons, message_id, ..."""
        self.actions: list[dict[str, Any]] = []
        self.answers: list[dict[str, Any]] = []
        self.edits: list[dict[str, Any]] = []
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.failures: dict[str, list[tuple[int, dict[str, Any]]]] = {}
        self.refused: list[tuple[str, int]] = []
        self.ids = itertools.count(1)
        self.message_ids = itertools.count(1000)
        self.changed = threading.Condition()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length", 0))
                raw = self.rfile.read(length).decode()
                status, body = stub.answer(self.path, self.headers.get("content-type", ""), raw)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the bot stopped waiting (a long poll cut short at its stop)

            do_GET = do_POST  # noqa: N815

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> StubTelegram:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    # --- the Bot API ------------------------------------------------------------------------

    def answer(self, path: str, kind: str, raw: str) -> tuple[int, dict[str, Any]]:
        prefix = f"/bot{self.token}/"
        if not path.startswith(prefix):
            return 401, {"ok": False, "error_code": 401, "description": "Unauthorized"}
        method = path[len(prefix) :]
        params = self.params(kind, raw)
        with self.changed:
            self.calls.append((method, params))
            queued = self.failures.get(method)
            if queued:
                status, body = queued.pop(0)
                self.refused.append((method, status))
                return status, body
        handler = getattr(self, f"api_{method}", None)
        if handler is None:
            return 404, {"ok": False, "error_code": 404, "description": "Not Found"}
        result = handler(params)
        with self.changed:
            self.changed.notify_all()
        return 200, {"ok": True, "result": result}

    @staticmethod
    def params(kind: str, raw: str) -> dict[str, Any]:
        if not raw:
            return {}
        if "json" in kind:
            return json.loads(raw)
        params: dict[str, Any] = dict(parse_qsl(raw, keep_blank_values=True))
        for name in JSON_FIELDS:
            if name in params and params[name]:
                params[name] = json.loads(params[name])
        return params

    def api_getMe(self, params: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
        return BOT

    def api_deleteWebhook(self, params: dict[str, Any]) -> bool:  # noqa: N802
        return True

    def api_setWebhook(self, params: dict[str, Any]) -> bool:  # noqa: N802
        return True

    def api_setMyCommands(self, params: dict[str, Any]) -> bool:  # noqa: N802
        return True

    def api_sendChatAction(self, params: dict[str, Any]) -> bool:  # noqa: N802
        with self.changed:
            self.actions.append(params)
        return True

    def api_answerCallbackQuery(self, params: dict[str, Any]) -> bool:  # noqa: N802
        with self.changed:
            self.answers.append(params)
        return True

    def api_editMessageReplyMarkup(self, params: dict[str, Any]) -> Any:  # noqa: N802
        with self.changed:
            self.edits.append(params)
            for message in self.sent:
                if message["message_id"] == int(params["message_id"]):
                    message["buttons"] = buttons_of(params.get("reply_markup"))
                    return message["raw"]
        return True

    def api_getUpdates(self, params: dict[str, Any]) -> list[dict[str, Any]]:  # noqa: N802
        deadline = time.monotonic() + min(float(params.get("timeout", 0)), 2.0)
        with self.changed:
            if params.get("offset"):
                offset = int(params["offset"])
                self.pending = [
                    u
                    for u in self.pending
                    if id(u) not in self.delivered or u["update_id"] >= offset
                ]
            while True:
                left = deadline - time.monotonic()
                if self.pending or left <= 0:
                    self.delivered.update(id(u) for u in self.pending)
                    return list(self.pending)
                self.changed.wait(left)

    def api_sendMessage(self, params: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
        chat_id = int(params["chat_id"])
        message_id = next(self.message_ids)
        raw = {
            "message_id": message_id,
            "date": int(time.time()),
            "chat": chat(chat_id),
            "from": {k: BOT[k] for k in ("id", "is_bot", "first_name", "username")},
            "text": params["text"],
        }
        if params.get("reply_markup"):
            raw["reply_markup"] = params["reply_markup"]
        with self.changed:
            self.sent.append(
                {
                    "chat_id": chat_id,
                    "text": params["text"],
                    "message_id": message_id,
                    "reply_to": (params.get("reply_parameters") or {}).get("message_id"),
                    "parse_mode": params.get("parse_mode"),
                    "buttons": buttons_of(params.get("reply_markup")),
                    "raw": raw,
                }
            )
        return raw

    # --- what people do ---------------------------------------------------------------------

    def _queue(self, update: dict[str, Any]) -> int:
        with self.changed:
            update_id = next(self.ids)
            queued = {"update_id": update_id, **update}
            self.updates.append(queued)
            self.pending.append(queued)
            self.changed.notify_all()
            return update_id

    def say(self, user: int, text: str, chat_id: int | None = None) -> int:
        """``user`` writes ``text`` in a chat (their private chat by default); the message id.

        Someone else's private chat makes a forged update (Telegram never sends one).
        """
        message_id = next(self.message_ids)
        message = {
            "message_id": message_id,
            "date": int(time.time()),
            "chat": chat(chat_id if chat_id is not None else user),
            "from": person(user),
            "text": text,
        }
        if text.startswith("/"):
            length = len(text.split(" ", 1)[0])
            message["entities"] = [{"type": "bot_command", "offset": 0, "length": length}]
        self._queue({"message": message})
        return message_id

    def press(self, user: int, message: dict[str, Any], label: str) -> int:
        """``user`` presses the button ``label`` under a message the bot sent; the update id."""
        data = next(d for row in message["buttons"] for (text, d) in row if text == label)
        return self.press_data(user, message, data)

    def press_data(self, user: int, message: dict[str, Any], data: str) -> int:
        return self._queue(
            {
                "callback_query": {
                    "id": f"query-{time.monotonic_ns()}",
                    "from": person(user),
                    "message": message["raw"],
                    "chat_instance": "stub",
                    "data": data,
                }
            }
        )

    def fail(self, method: str, *answers: tuple[int, dict[str, Any]]) -> None:
        with self.changed:
            self.failures.setdefault(method, []).extend(answers)

    def forget_offset(self) -> None:
        """Deliver every update again (the bot never confirmed them)."""
        with self.changed:
            self.pending = list(self.updates)
            self.delivered.clear()

    def renumber(self, first: int) -> None:
        """Number the next updates from ``first`` on."""
        with self.changed:
            self.ids = itertools.count(first)

    # --- waiting for the bot ----------------------------------------------------------------

    def wait(self, check: Callable[[], Any], seconds: float = 90) -> Any:
        deadline = time.monotonic() + seconds
        with self.changed:
            while True:
                found = check()
                if found:
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError("the bot did not do it in time")
                self.changed.wait(min(left, 0.5))

    def replies(self, chat_id: int) -> list[dict[str, Any]]:
        return [m for m in self.sent if m["chat_id"] == chat_id]

    def next_reply(self, chat_id: int, after: int, seconds: float = 90) -> dict[str, Any]:
        """The first message the bot sends to ``chat_id`` beyond the ``after`` it had sent."""
        return self.wait(lambda: self.replies(chat_id)[after:][:1], seconds)[0]

    def called(self, method: str) -> list[dict[str, Any]]:
        return [p for m, p in self.calls if m == method]


def chat(chat_id: int) -> dict[str, Any]:
    if chat_id < 0:
        return {"id": chat_id, "type": "group", "title": "family"}
    return {"id": chat_id, "type": "private", "first_name": f"user{chat_id}"}


def buttons_of(markup: dict[str, Any] | None) -> list[list[tuple[str, str]]]:
    if not markup:
        return []
    return [[(b["text"], b["callback_data"]) for b in row] for row in markup["inline_keyboard"]]
