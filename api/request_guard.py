"""What every request passes before any route reads it: the host, the key, the body's size.

``RequestGuard`` is pure ASGI middleware around the whole app (``keel.api.app``), so /v1, /mcp,
/metrics, the pages and the WebSocket get one implementation of each check, and nothing is
buffered beyond the limit:

- With no API keys (a local server) the Host header must name 127.0.0.1, localhost, [::1],
  ``KEEL_HOST`` or one of ``KEEL_ALLOWED_HOSTS``, else 421; a browser's ``Origin``, when sent,
  must name one of them too, else 403. A web page that rebinds its own name to 127.0.0.1 can
  therefore neither read nor change the local user's tasks. A WebSocket refused so is closed
  before it opens (HTTP 403).
- With keys, a request to the API (/v1, /mcp, /metrics), and any request that carries a body, must
  carry a valid key: 401 before a byte of its body is read.
- Telegram's webhook (``/telegram/webhook``) carries Telegram's secret token instead of a key:
  401 before its body is read when the token is missing or wrong.
- A body larger than ``KEEL_MAX_BODY_BYTES`` is answered 413: at once when its Content-Length says
  so, else as soon as what arrived passes the limit. A body within it is read whole, then handed
  on, so nothing parses a body that has not passed.

Refusals of a request whose body is still coming close the connection after the answer, so the
client stops sending it.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.requests import HTTPConnection
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from keel.api.deps import user_for
from keel.api.errors import APIError, error_body
from keel.api.service import Service
from keel.api.telegram import SECRET_HEADER, WEBHOOK_PATH
from keel.graphs.settings import Settings

KEYED_PATHS = ("/v1/", "/mcp", "/metrics")
"""Where every request needs a key when keys are set (beside any request with a body)."""
CLOSE_POLICY_VIOLATION = 1008


def host_name(host: str) -> str:
    """The name in a Host header's value, lower case, without its port or brackets."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.partition(":")[0]


def origin_name(origin: str) -> str:
    """The host named by an Origin header (empty for ``null`` or anything unreadable)."""
    try:
        return urlsplit(origin.strip()).hostname or ""
    except ValueError:
        return ""


def misdirected(headers: Headers, names: frozenset[str]) -> APIError | None:
    """Why a local server refuses a request for a host (or from an origin) not its own."""
    host = host_name(headers.get("host", ""))
    if host not in names:
        return APIError(
            421,
            "misdirected_request",
            f"this server answers for {', '.join(sorted(names))} only (no API keys are set); "
            "name others in KEEL_ALLOWED_HOSTS",
        )
    origin = headers.get("origin")
    if origin is not None and origin_name(origin) not in names:
        return APIError(
            403, "forbidden_origin", "requests from pages of other hosts are refused here"
        )
    return None


def has_body(headers: Headers) -> bool:
    """The request says a body follows."""
    return "transfer-encoding" in headers or headers.get("content-length", "0").strip() != "0"


def too_large(limit: int) -> APIError:
    """413: the body is over ``limit`` bytes."""
    return APIError(
        413, "body_too_large", f"the request body is over {limit} bytes (KEEL_MAX_BODY_BYTES)"
    )


def declared_size(headers: Headers) -> int | None:
    """The body's size as its Content-Length gives it (None: not given, or not a number)."""
    try:
        return int(headers["content-length"])
    except (KeyError, ValueError):
        return None


class RequestGuard:
    """ASGI middleware: check a request's host, key and body size before the app sees it."""

    def __init__(self, app: ASGIApp, settings: Settings, service: Callable[[], Service]) -> None:
        """Guard ``app`` by ``settings``; ``service`` is the running service (for the keys)."""
        self.app, self.service = app, service
        self.local = not settings.keys
        self.names = settings.host_names
        self.limit = settings.body_limit
        secret = settings.telegram_webhook_secret
        self.webhook_secret = secret.get_secret_value().encode() if secret else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, or answer it without reading its body."""
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if self.local and (refusal := misdirected(headers, self.names)):
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": CLOSE_POLICY_VIOLATION})
                return
            await self._refuse(refusal, scope, receive, send, has_body(headers))
            return
        if scope["type"] == "websocket":
            await self.app(scope, receive, send)
            return
        body = has_body(headers)
        try:
            if scope["path"] == WEBHOOK_PATH:
                self._check_webhook_secret(headers)
            elif not self.local and (body or scope["path"].startswith(KEYED_PATHS)):
                await user_for(self.service(), HTTPConnection(scope))
            if body and (declared_size(headers) or 0) > self.limit:
                raise too_large(self.limit)
        except APIError as exc:
            await self._refuse(exc, scope, receive, send, body)
            return
        if not body:
            await self.app(scope, receive, send)
            return
        await self._read_then_pass(scope, receive, send)

    def _check_webhook_secret(self, headers: Headers) -> None:
        """Telegram's webhook carries the secret token instead of a key (401 without it); no
        webhook configured, the path is not found (404), and its body is never read.
        """  # noqa: D205
        if self.webhook_secret is None:
            raise APIError(404, "not_found", "no Telegram webhook is configured on this server")
        given = headers.get(SECRET_HEADER, "").encode()
        if not hmac.compare_digest(given, self.webhook_secret):
            raise APIError(401, "unauthorized", f"a missing or wrong {SECRET_HEADER}")

    async def _read_then_pass(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Read the body up to the limit (413 past it), then hand it on as it came."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                await self._refuse(too_large(self.limit), scope, receive, send, True)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        pending: list[Message] = [{"type": "http.request", "body": b"".join(chunks)}]

        async def replay() -> Message:
            return pending.pop() if pending else await receive()

        await self.app(scope, replay, send)

    @staticmethod
    async def _refuse(
        error: APIError, scope: Scope, receive: Receive, send: Send, unread_body: bool
    ) -> None:
        headers = {"Connection": "close"} if unread_body else None
        answer = JSONResponse(error_body(error.code, error.message), error.status, headers)
        await answer(scope, receive, send)
