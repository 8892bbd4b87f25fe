"""The agent's tools and how a tool call runs.

The todo domain is in ``tasks``, the offline understanding in ``understanding``.
"""
