"""keel's entry points: the command line (and the HTTP API)."""
