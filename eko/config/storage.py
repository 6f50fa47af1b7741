"""Settings of storage: the data directory, the database and its connection pool, and where
model files are assembled. A section of eko.config.Settings (which inherits it, so it reads
from EKO_* like every other setting)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Self

from pydantic import BaseModel, Field, field_validator, model_validator

from eko.config.paths import DATABASE_FILE_NAME, default_home, sqlite_url


class StorageSettings(BaseModel):
    # --- storage ---
    # Eko's data directory: the default SQLite database (<home>/eko.db) and assembled model
    # files (<home>/models). Made absolute once, so it names one place after any chdir.
    home: Path = Field(default_factory=default_home)
    # Where bundled models are assembled (1.1 GB for the default); empty = <home>/models. Lets
    # several data directories (test runs, staging) share one copy.
    models_path: Path | None = None
    # Empty = the SQLite file <home>/eko.db (filled in by _default_database_url).
    database_url: str = ""
    # Vector search on SQLite: "auto" uses sqlite-vec when it loads, else exact NumPy search.
    vector_backend: Literal["auto", "sqlite-vec", "numpy"] = "auto"
    # pgvector HNSW search breadth: recall vs latency (see README benchmark).
    pg_hnsw_ef_search: int = Field(default=100, ge=1, le=1000)
    # Connection pool. Connections are held only for short transactions (never across a model
    # call), so a small pool serves many concurrent messages; past pool + overflow, a request
    # waits at most db_pool_timeout_s, then gets a 503 with Retry-After.
    db_pool_size: int = Field(default=10, ge=1, le=1000)
    db_max_overflow: int = Field(default=10, ge=0, le=1000)
    db_pool_timeout_s: float = Field(default=10.0, gt=0)

    @field_validator("home", mode="before")
    @classmethod
    def _home_or_default(cls, value: Any) -> Any:
        # EKO_HOME= (empty) means the default, not the working directory.
        return default_home() if value is None or str(value).strip() == "" else value

    @field_validator("home")
    @classmethod
    def _absolute_home(cls, value: Path) -> Path:
        return value.expanduser().resolve()

    @model_validator(mode="after")
    def _default_database_url(self) -> Self:
        if not self.database_url.strip():
            self.database_url = sqlite_url(self.home / DATABASE_FILE_NAME)
        return self

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")

    @property
    def models_dir(self) -> Path:
        """Where model files assembled from packages are kept (created by whoever writes there)."""
        return self.models_path if self.models_path is not None else self.home / "models"

    def ensure_home(self) -> Path:
        """Create the data directory on first use (SQLite cannot create a file's folder)."""
        self.home.mkdir(parents=True, exist_ok=True)
        return self.home
