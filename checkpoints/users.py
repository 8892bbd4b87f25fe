"""Whose data it is when nobody signed in: ``LOCAL_USER``, the user of a process without API keys.

A module of its own, with nothing to import, so that a command can name the user before keel's
parts have loaded (``keel chat`` shows its prompt first).
"""

LOCAL_USER = "local"
"""The user of a process without API keys (and of a context that names none)."""
