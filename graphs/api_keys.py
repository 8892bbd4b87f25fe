"""``KEEL_API_KEYS`` read into keys and their users; the error of settings that expose the service.

``user1:key1,user2:key2``: every user a key of their own, no user twice. Read by
``keel.graphs.settings.Settings.keys``.
"""

from __future__ import annotations


class UnsafeSettings(ValueError):
    """The settings would expose the service without authentication."""


def parse_api_keys(text: str) -> dict[str, str]:
    """API key -> user id from ``KEEL_API_KEYS``; ``UnsafeSettings`` names what is malformed."""
    pairs: dict[str, str] = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        user, sep, key = (part.strip() for part in item.partition(":"))
        if not sep or not user or not key:
            raise UnsafeSettings(f"KEEL_API_KEYS entry {user!r} is not user:key")
        if key in pairs:
            raise UnsafeSettings(
                f"KEEL_API_KEYS gives users {pairs[key]!r} and {user!r} the same key; "
                "every user needs a key of their own"
            )
        if user in pairs.values():
            raise UnsafeSettings(f"KEEL_API_KEYS names user {user!r} twice")
        pairs[key] = user
    return pairs
