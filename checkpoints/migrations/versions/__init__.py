"""The migration scripts, applied in order by ``checkpoints.migrate.upgrade``."""
