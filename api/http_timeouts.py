"""How long a connection may take to send a request: uvicorn's HTTP protocol, with read deadlines.

uvicorn closes an idle connection only after it has answered a request (``timeout_keep_alive``),
so a client that connects and sends nothing, or sends a request line and then trickles header
lines, would hold a connection (and one of ``KEEL_MAX_CONNECTIONS``) for as long as it likes.
``TimedHttpProtocol`` (given to uvicorn by ``keel.api.serving``) bounds every stage:

- before the first request, as between two: ``KEEL_KEEP_ALIVE_SECONDS`` of silence closes it;
- from a request's first byte, its line and headers must arrive within
  ``KEEL_HEADER_TIMEOUT_SECONDS``;
- from its headers, its body must arrive within ``KEEL_BODY_TIMEOUT_SECONDS``.

A request cut off by a deadline is answered 408 in keel's error envelope, and the connection is
closed; one whose answer has begun is closed.
"""

from __future__ import annotations

import asyncio
import json
from functools import cache
from typing import NamedTuple

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from keel.api.errors import error_body
from keel.graphs.settings import Settings


class Deadlines(NamedTuple):
    """Seconds a request's headers, then its body, may take to arrive."""

    headers: float
    body: float


@cache
def deadlines() -> Deadlines:
    """This process's deadlines, from the settings (``keel serve`` passes them to its workers)."""
    settings = Settings()
    return Deadlines(settings.header_timeout_seconds, settings.body_timeout_seconds)


def timeout_answer(what: str) -> bytes:
    """A whole HTTP/1.1 408 answer saying which part of the request came too slowly."""
    message = f"the request's {what} did not arrive in time; the connection is closed"
    body = json.dumps(error_body("request_timeout", message)).encode()
    head = (
        "HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nx-content-type-options: nosniff\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode() + body


class TimedHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol whose connections cannot sit on a half-sent request."""

    read_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Count the connection; it must start a request within the keep-alive time."""
        super().connection_made(transport)
        # the keep-alive timer, armed before the first request as uvicorn arms it after each one;
        # the connection's first bytes cancel it
        self.timeout_keep_alive_task = self.loop.call_later(
            self.timeout_keep_alive, self.timeout_keep_alive_handler
        )

    def connection_lost(self, exc: Exception | None) -> None:
        """Forget the connection and its deadline."""
        self._disarm()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        """A request starts: its line and headers have until the header deadline."""
        super().on_message_begin()
        self._arm(deadlines().headers, "headers")

    def on_headers_complete(self) -> None:
        """The headers are in: the body, if any, has until the body deadline."""
        self._arm(deadlines().body, "body")
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        """The whole request is in: no deadline until the next one begins."""
        self._disarm()
        super().on_message_complete()

    def handle_websocket_upgrade(self) -> None:
        """The connection becomes a WebSocket, with deadlines of its own."""
        self._disarm()
        super().handle_websocket_upgrade()

    def _arm(self, seconds: float, what: str) -> None:
        self._disarm()
        self.read_deadline = self.loop.call_later(seconds, self._too_slow, what)

    def _disarm(self) -> None:
        if self.read_deadline is not None:
            self.read_deadline.cancel()
            self.read_deadline = None

    def _too_slow(self, what: str) -> None:
        self.read_deadline = None
        if self.transport.is_closing():
            return
        answered = self.cycle is not None and self.cycle.response_started and what == "body"
        if not answered:
            self.transport.write(timeout_answer(what))
        self.transport.close()
