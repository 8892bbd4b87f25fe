"""The nodes of keel's graph, the chat models and the context they run with."""
