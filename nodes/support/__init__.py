"""What the nodes share besides state, models and context: the message log, planning, previews."""
