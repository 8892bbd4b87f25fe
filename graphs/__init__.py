"""The turn graph of keel: its state schema, state machine and builder."""
