"""Storage: SQLAlchemy models, repositories, vector search, migrations."""
