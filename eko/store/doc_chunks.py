"""Repository of documentation scopes and their chunks (vectors: see eko/chat/docs/service.py).

A scope with a room_id is that room's own (its attachments): the listings here are of the
shared scopes (room_id NULL) unless a room is named."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store.chat_models import DocChunk, DocScope


async def get_scope(session: AsyncSession, *, name: str) -> DocScope | None:
    result = await session.execute(select(DocScope).where(DocScope.name == name))
    return result.scalar_one_or_none()


async def ensure_scope(
    session: AsyncSession, *, name: str, description: str | None, room_id: str | None = None
) -> DocScope:
    scope = await get_scope(session, name=name)
    if scope is None:
        scope = DocScope(name=name, description=description or "", room_id=room_id)
        session.add(scope)
        await session.flush()
    elif description is not None:
        scope.description = description
    return scope


async def list_scopes(
    session: AsyncSession, *, room_id: str | None = None
) -> Sequence[tuple[DocScope, int, int]]:
    """The shared scopes (and `room_id`'s own, if named) with their number of chunks and of
    distinct sources, by name."""
    shared = DocScope.room_id.is_(None)
    result = await session.execute(
        select(
            DocScope,
            func.count(DocChunk.id),
            func.count(func.distinct(DocChunk.source)),
        )
        .outerjoin(DocChunk, DocChunk.scope_id == DocScope.id)
        .where(shared if room_id is None else shared | (DocScope.room_id == room_id))
        .group_by(DocScope.id)
        .order_by(DocScope.name)
    )
    return [(scope, int(chunks), int(sources)) for scope, chunks, sources in result.all()]


async def scope_names(session: AsyncSession) -> list[str]:
    """The shared scopes' names."""
    result = await session.execute(
        select(DocScope.name).where(DocScope.room_id.is_(None)).order_by(DocScope.name)
    )
    return list(result.scalars())


async def chunk_ids_of_source(session: AsyncSession, *, scope_id: str, source: str) -> list[str]:
    result = await session.execute(
        select(DocChunk.id).where(DocChunk.scope_id == scope_id, DocChunk.source == source)
    )
    return list(result.scalars())


async def chunk_ids_of_scope(session: AsyncSession, *, scope_id: str) -> list[str]:
    result = await session.execute(select(DocChunk.id).where(DocChunk.scope_id == scope_id))
    return list(result.scalars())


async def delete_chunks(session: AsyncSession, *, chunk_ids: Sequence[str]) -> None:
    if chunk_ids:
        await session.execute(delete(DocChunk).where(DocChunk.id.in_(list(chunk_ids))))


async def get_chunks(session: AsyncSession, *, chunk_ids: Sequence[str]) -> dict[str, DocChunk]:
    if not chunk_ids:
        return {}
    result = await session.execute(select(DocChunk).where(DocChunk.id.in_(list(chunk_ids))))
    return {chunk.id: chunk for chunk in result.scalars()}
