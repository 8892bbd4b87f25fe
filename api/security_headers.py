"""Headers every answer carries: ``nosniff`` everywhere, and no framing of the API's own pages.

``SecurityHeaders`` is pure ASGI middleware around the whole app (``keel.api.app``), so streamed
answers (SSE) pass through unbuffered:

- every HTTP answer carries ``X-Content-Type-Options: nosniff``: a browser never reads a JSON
  answer (or a task's text inside one) as a script or a page;
- the reference pages (/docs, /redoc and Swagger UI's OAuth2 redirect page) carry
  ``X-Frame-Options: DENY`` and a Content-Security-Policy with ``frame-ancestors 'none'`` that
  allows only keel's own origin and, for their inline scripts, those very scripts (by hash).
  Swagger UI and ReDoc style their elements inline and ReDoc runs its search in a ``blob:`` worker,
  so the policy allows both.

The chat page sets its own stricter headers (``keel.api.routers.web``).
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Collection

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

NOSNIFF = ("X-Content-Type-Options", "nosniff")
_INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.DOTALL)


def page_policy(html: bytes) -> str:
    """The Content-Security-Policy of a reference page: its own origin, its own inline scripts."""
    scripts = " ".join(
        ["'self'"]
        + [
            f"'sha256-{base64.b64encode(hashlib.sha256(script).digest()).decode()}'"
            for script in _INLINE_SCRIPT.findall(html)
        ]
    )
    return (
        f"default-src 'self'; script-src {scripts}; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; object-src 'none'; "
        "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )


class SecurityHeaders:
    """ASGI middleware: ``nosniff`` on every answer; the reference ``pages`` never framed."""

    def __init__(self, app: ASGIApp, pages: Collection[str]) -> None:
        """Add the headers to ``app``'s answers; ``pages`` are the reference pages' paths."""
        self.app, self.pages = app, frozenset(pages)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on; add the headers to its answer."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["path"] in self.pages:
            await self._page(scope, receive, send)
            return

        async def with_nosniff(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message).setdefault(*NOSNIFF)
            await send(message)

        await self.app(scope, receive, with_nosniff)

    async def _page(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer a reference page (a few kilobytes) whole, with its policy."""
        start: Message | None = None
        body = bytearray()

        async def hold(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
                return
            if message["type"] != "http.response.body" or start is None:
                await send(message)
                return
            body.extend(message.get("body", b""))
            if message.get("more_body", False):
                return
            headers = MutableHeaders(scope=start)
            headers.setdefault(*NOSNIFF)
            headers["X-Frame-Options"] = "DENY"
            headers["Content-Security-Policy"] = page_policy(bytes(body))
            await send(start)
            await send({"type": "http.response.body", "body": bytes(body)})

        await self.app(scope, receive, hold)
