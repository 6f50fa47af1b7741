"""Docs scopes: staff ingest documents; every user may list scopes and search them. A room's own
scope (its attachments, eko/api/routers/room_attachments.py) is never listed, searched, written
or deleted here."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, status

from eko.api.deps import CurrentUser, ServicesDep, StaffUser
from eko.api.problems import Problem, problem_responses
from eko.api.schemas.chat import NAME_PATTERN, DocHitOut, DocumentIn, IngestOut, ScopeOut
from eko.chat.docs.service import InvalidScope
from eko.embed.base import EmbeddingError

router = APIRouter(prefix="/v1/docs", tags=["docs"])

ScopeName = Annotated[str, Path(pattern=NAME_PATTERN)]


@router.get("/scopes")
async def list_scopes(_user: CurrentUser, services: ServicesDep) -> list[ScopeOut]:
    scopes = await services.engine.docs.list_scopes()
    return [ScopeOut.model_validate(s, from_attributes=True) for s in scopes]


@router.post(
    "/scopes/{scope}/documents",
    status_code=status.HTTP_201_CREATED,
    responses=problem_responses(403),
)
async def ingest_document(
    scope: ScopeName, body: DocumentIn, _staff: StaffUser, services: ServicesDep
) -> IngestOut:
    """Chunk, embed and store one document in a scope (created if new); re-posting the same
    source replaces its chunks."""
    if not body.text.strip():
        raise Problem(422, "empty-document", "Empty document", "The document has no text.")
    try:
        result = await services.engine.docs.ingest(
            scope=scope,
            source=body.source,
            text=body.text,
            fmt=body.format,
            description=body.description,
        )
    except InvalidScope as exc:  # a room's reserved name
        raise Problem(422, "invalid-scope", "Invalid scope name", str(exc)) from exc
    except EmbeddingError as exc:
        raise Problem(503, "embedder-unavailable", "Embedder unavailable", str(exc)) from exc
    return IngestOut(
        scope=result.scope, source=result.source, chunks=result.chunks, replaced=result.replaced
    )


@router.delete(
    "/scopes/{scope}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=problem_responses(403, 404),
)
async def delete_scope(scope: ScopeName, _staff: StaffUser, services: ServicesDep) -> None:
    if not await services.engine.docs.delete_scope(scope):
        raise Problem(404, "scope-not-found", "Scope not found", f"No docs scope {scope!r}.")


@router.get("/search")
async def search(
    _user: CurrentUser,
    services: ServicesDep,
    q: Annotated[str, Query(min_length=1, max_length=2000)],
    scope: Annotated[list[str], Query(min_length=1, max_length=3)],
    limit: Annotated[int, Query(ge=1, le=20)] = 8,
) -> list[DocHitOut]:
    """The chunks closest to `q` within 1-3 scopes (hard caps: 8 per scope, 20 in all)."""
    try:
        hits = await services.engine.docs.search(q, scopes=scope, limit=limit)
    except EmbeddingError as exc:
        raise Problem(503, "embedder-unavailable", "Embedder unavailable", str(exc)) from exc
    return [DocHitOut.model_validate(h, from_attributes=True) for h in hits]
