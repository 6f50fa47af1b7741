"""Alembic migrations, the same numbered ones for SQLite and PostgreSQL."""
