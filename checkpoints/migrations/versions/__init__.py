"""The migration scripts, applied in order by ``keel.checkpoints.migrate.upgrade``."""
