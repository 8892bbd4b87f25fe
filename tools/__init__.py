"""The todo domain: the task store and the tools the agent calls."""
