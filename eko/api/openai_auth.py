"""The OpenAI-compatible routes' authentication: `Authorization: Bearer <Eko key>`, refused
in OpenAI's error shape."""

from __future__ import annotations

from fastapi import Request

from eko.api.schemas.openai import OpenAIError
from eko.store import users as user_repo
from eko.store.models import User
from eko.wiring import Services


async def authenticate(services: Services, request: Request) -> User:
    scheme, _, key = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise OpenAIError(
            401,
            "Missing API key: send `Authorization: Bearer <your Eko key>`.",
            type="authentication_error",
            code="missing_api_key",
        )
    async with services.database.session() as session:
        user = await user_repo.get_by_api_key(session, api_key=key.strip())
    if user is None:
        raise OpenAIError(
            401, "Invalid API key.", type="authentication_error", code="invalid_api_key"
        )
    return user
