"""What keel's nodes share: state, run context, chat models, events, the message log."""
