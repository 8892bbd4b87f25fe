"""The agent's tools and how a tool call runs: the todo domain in ``tasks``, the offline
understanding in ``understanding``.
"""
