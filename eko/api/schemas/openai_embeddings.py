"""Shapes of Eko's OpenAI-compatible POST /v1/embeddings, and their OpenAPI description."""

from __future__ import annotations

import base64
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from eko.api.schemas.inputs import InputText
from eko.api.schemas.openai_docs import error_responses, inline_schema

# OpenAI's limit on the inputs of one request.
MAX_INPUTS = 2048


class EmbeddingRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # One text or a list of texts (token arrays are not accepted: Eko's embedders read text).
    input: InputText | list[InputText] = Field(
        description="A text or a list of texts (at most 2048), none empty"
    )
    model: InputText = Field(description="The configured embedder's name (or `default`)")
    encoding_format: Literal["float", "base64"] = "float"
    dimensions: int | None = Field(
        default=None, description="Must be the embedder's dimension when given"
    )
    user: InputText | None = Field(default=None, max_length=200)
    # Eko's: how the embedder reads the texts (e5 models prefix "query: " or "passage: ").
    input_type: Literal["query", "passage"] = "query"

    def texts(self) -> list[str]:
        return [self.input] if isinstance(self.input, str) else list(self.input)


def embedding_body(
    vectors: np.ndarray, *, model: str, encoding_format: str, words: int
) -> dict[str, Any]:
    """OpenAI's `list` of `embedding`s. `usage` counts words: Eko's embedders count no
    tokens."""
    data = []
    for index, vector in enumerate(vectors):
        floats = np.asarray(vector, dtype="<f4")
        embedding: list[float] | str = (
            base64.b64encode(floats.tobytes()).decode("ascii")
            if encoding_format == "base64"
            else [float(x) for x in floats]
        )
        data.append({"object": "embedding", "index": index, "embedding": embedding})
    return {
        "object": "list",
        "data": data,
        "model": model,
        "usage": {"prompt_tokens": words, "total_tokens": words},
    }


EMBEDDINGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["object", "data", "model", "usage"],
    "properties": {
        "object": {"const": "list"},
        "data": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["object", "index", "embedding"],
                "properties": {
                    "object": {"const": "embedding"},
                    "index": {"type": "integer", "minimum": 0},
                    "embedding": {
                        "anyOf": [
                            {"type": "array", "items": {"type": "number"}},
                            {"type": "string", "description": "base64 little-endian float32"},
                        ]
                    },
                },
            },
        },
        "model": {"type": "string"},
        "usage": {
            "type": "object",
            "description": "Words of the inputs (Eko's embedders count no tokens)",
            "required": ["prompt_tokens", "total_tokens"],
            "properties": {
                "prompt_tokens": {"type": "integer", "minimum": 0},
                "total_tokens": {"type": "integer", "minimum": 0},
            },
        },
    },
}


def embeddings_request_body() -> dict[str, Any]:
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": inline_schema(EmbeddingRequest)}},
        }
    }


def embeddings_responses() -> dict[int | str, dict[str, Any]]:
    return {
        200: {
            "description": "One embedding per input, in order",
            "content": {"application/json": {"schema": EMBEDDINGS_SCHEMA}},
        },
        **error_responses(400, 401, 404, 413, 422, 503),
    }
