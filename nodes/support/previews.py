"""Logging helpers for nodes: message text is only ever logged as a short preview."""

from __future__ import annotations

PREVIEW_CHARS = 100


def preview(text: object, limit: int = PREVIEW_CHARS) -> str | None:
    """At most ``limit`` characters of ``text`` (with an ellipsis when cut); None stays None."""
    if text is None:
        return None
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
