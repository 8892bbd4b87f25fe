"""The graph's state.

Its schema, the four-state machine with its one transition table, the commands a turn's input may
carry, a turn's lineage, and how todolist steps close.
"""
