"""Versioned migrations of keel's app tables (alembic), run on SQLite and PostgreSQL alike."""
