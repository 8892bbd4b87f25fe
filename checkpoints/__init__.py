"""Persistence: the checkpointer factory and keel's app tables."""
