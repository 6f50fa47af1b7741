"""Memory: facts / self / goals (list, search, add, delete), a room's summaries, topics, context.

Visibility comes from eko.memory.scopes.visibility: staff sees every scope; a member sees their
own private scope, the scopes of the rooms they are in, and global, and may write or delete in
their own and their rooms' scopes. An item out of sight is reported as not found.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, status
from sqlalchemy import select

from eko.api.deps import CurrentUser, DatabaseDep, ServicesDep, SettingsDep, room_for_user
from eko.api.problems import Problem, problem_responses
from eko.api.schemas.inputs import MAX_QUERY_INT
from eko.api.schemas.memory import (
    DualContextOut,
    GoalStatus,
    ItemKind,
    MemoryItemCreate,
    MemoryItemHit,
    MemoryItemOut,
    MemoryItemSources,
    MemoryItemWritten,
    SourceTurnOut,
    SummaryOut,
    TopicHitOut,
    TopicOut,
)
from eko.embed.base import EmbeddingError
from eko.memory.items import NewItem
from eko.memory.scopes import Visibility, describe, room_key, user_key, visibility
from eko.memory.service import Memory
from eko.memory.sources import source_turn
from eko.store import rooms as room_repo
from eko.store.memory_models import MemoryItem
from eko.store.models import Room, User

router = APIRouter(prefix="/v1", tags=["memory"])
NOT_FOUND = problem_responses(404)

Query_ = Annotated[str, Query(min_length=1, max_length=1000, description="text to search for")]


async def get_memory(services: ServicesDep) -> Memory:
    return services.memory


MemoryDep = Annotated[Memory, Depends(get_memory)]


async def _visibility(database: DatabaseDep, user: User) -> Visibility:
    async with database.session() as session:
        return await visibility(session, user)


async def _room(database: DatabaseDep, room_id: str, user: User) -> Room:
    async with database.session() as session:
        return await room_for_user(session, room_id=room_id, user=user)


def _embedder_down(exc: EmbeddingError) -> Problem:
    return Problem(503, "embedder-unavailable", "Embedder unavailable", str(exc)[:300])


# --- facts / self / goals ---


@router.get("/memory/items")
async def list_items(
    user: CurrentUser,
    database: DatabaseDep,
    memory: MemoryDep,
    settings: SettingsDep,
    kind: ItemKind | None = None,
    scope: Annotated[str | None, Query(max_length=200)] = None,
    status_: Annotated[GoalStatus | None, Query(alias="status")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_QUERY_INT)] = 0,
) -> list[MemoryItemOut]:
    """Items the caller may see, most recently updated first."""
    keys = (await _visibility(database, user)).filter(scope)
    items = await memory.items.list_items(
        keys=keys,
        kind=kind,
        status=status_,
        limit=min(limit, settings.page_size_max),
        offset=offset,
    )
    return [MemoryItemOut.of(item) for item in items]


@router.get("/memory/items/search")
async def search_items(
    q: Query_,
    user: CurrentUser,
    database: DatabaseDep,
    memory: MemoryDep,
    kind: ItemKind | None = None,
    scope: Annotated[str | None, Query(max_length=200)] = None,
    k: Annotated[int, Query(ge=1, le=50)] = 5,
) -> list[MemoryItemHit]:
    """The items closest to `q` among those the caller may see (staff: every scope)."""
    seen = await _visibility(database, user)
    keys = seen.filter(scope)
    if keys is None:
        keys = await memory.items.all_scopes()
    try:
        hits = await memory.items.search(keys=keys, query=q, kinds=[kind] if kind else None, k=k)
    except EmbeddingError as exc:
        raise _embedder_down(exc) from exc
    return [MemoryItemHit(item=MemoryItemOut.of(hit.item), score=hit.score) for hit in hits]


@router.post("/memory/items", status_code=status.HTTP_201_CREATED, responses=problem_responses(403))
async def add_item(
    body: MemoryItemCreate, user: CurrentUser, database: DatabaseDep, memory: MemoryDep
) -> MemoryItemWritten:
    """Remember an item by hand, with the same dedup as learned ones."""
    scope = body.scope or user_key(user)
    kind, _ = describe(scope)
    if kind == "unknown":
        raise Problem(
            422,
            "bad-scope",
            "Bad scope",
            "A scope is 'user:<public id>', 'room:<room id>' or 'global'.",
        )
    if not (await _visibility(database, user)).can_write(scope):
        raise Problem(
            403, "scope-forbidden", "Scope not writable", f"You may not write in {scope!r}."
        )
    if not body.content.strip():
        raise Problem(422, "empty-content", "Empty content", "An item needs content.")
    try:
        result = await memory.items.remember(
            NewItem(
                kind=body.kind,
                subject=body.subject,
                content=body.content,
                confidence=body.confidence,
            ),
            scope=scope,
        )
    except EmbeddingError as exc:
        raise _embedder_down(exc) from exc
    return MemoryItemWritten(
        item=MemoryItemOut.of(result.item), created=result.created, similarity=result.similarity
    )


async def _visible_item(
    item_id: str, user: User, database: DatabaseDep, memory: Memory
) -> tuple[MemoryItem, Visibility]:
    seen = await _visibility(database, user)
    item = await memory.items.get(item_id)
    if item is None or not seen.can_read(item.scope):
        raise Problem(
            404,
            "memory-item-not-found",
            "Memory item not found",
            f"No memory item {item_id!r} for this user.",
        )
    return item, seen


@router.get("/memory/items/{item_id}", responses=NOT_FOUND)
async def get_item(
    item_id: str, user: CurrentUser, database: DatabaseDep, memory: MemoryDep
) -> MemoryItemOut:
    item, _ = await _visible_item(item_id, user, database, memory)
    return MemoryItemOut.of(item)


@router.get("/memory/items/{item_id}/sources", responses=NOT_FOUND)
async def item_sources(
    item_id: str, user: CurrentUser, database: DatabaseDep, memory: MemoryDep
) -> MemoryItemSources:
    """The turn an item was learned from: the source message and the reply to it, if the
    caller may see the source's room (staff: always)."""
    item, _ = await _visible_item(item_id, user, database, memory)
    async with database.session() as session:
        turn = await source_turn(session, message_id=item.source_message_id)
        if not turn:
            return MemoryItemSources(item_id=item.id, turns=[])
        if user.role != "staff" and not await room_repo.is_member(
            session, room_id=turn[0].room_id, user_id=user.id
        ):
            return MemoryItemSources(item_id=item.id, turns=[], hidden=True)
        senders = {
            row[0]: row[1]
            for row in await session.execute(
                select(User.id, User.public_id).where(
                    User.id.in_({m.sender_id for m in turn if m.sender_id is not None})
                )
            )
        }
    return MemoryItemSources(
        item_id=item.id,
        turns=[
            SourceTurnOut(
                id=m.id,
                room_id=m.room_id,
                seq=m.seq,
                role=m.role,
                sender_public_id=senders.get(m.sender_id) if m.sender_id else None,
                content=m.content,
                created_at=m.created_at,
            )
            for m in turn
        ],
    )


@router.delete(
    "/memory/items/{item_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=problem_responses(403, 404),
)
async def delete_item(
    item_id: str, user: CurrentUser, database: DatabaseDep, memory: MemoryDep
) -> None:
    item, seen = await _visible_item(item_id, user, database, memory)
    if not seen.can_write(item.scope):
        raise Problem(
            403,
            "scope-forbidden",
            "Scope not writable",
            f"Only staff delete items of {item.scope!r}.",
        )
    await memory.items.delete(item.id)


# --- a room's summaries, topics and context ---


@router.get("/rooms/{room_id}/summaries", responses=NOT_FOUND)
async def list_summaries(
    room_id: str,
    user: CurrentUser,
    database: DatabaseDep,
    memory: MemoryDep,
    settings: SettingsDep,
    level: Annotated[int | None, Query(ge=1, le=100)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_QUERY_INT)] = 0,
) -> list[SummaryOut]:
    """The room's summaries, by level then chronologically."""
    room = await _room(database, room_id, user)
    views = await memory.summary_reader.list_summaries(
        room.id, level=level, limit=min(limit, settings.page_size_max), offset=offset
    )
    return [SummaryOut.of(view) for view in views]


@router.get("/rooms/{room_id}/summaries/search", responses=NOT_FOUND)
async def search_summaries(
    room_id: str,
    q: Query_,
    user: CurrentUser,
    database: DatabaseDep,
    memory: MemoryDep,
    topic: Annotated[str | None, Query(max_length=200, description="topic id or name")] = None,
    k: Annotated[int, Query(ge=1, le=50)] = 5,
) -> list[SummaryOut]:
    """The room's summaries closest to `q`, optionally only those of one topic (merged aliases
    included)."""
    room = await _room(database, room_id, user)
    try:
        views = await memory.summary_reader.search(room.id, query=q, topic=topic, k=k)
    except LookupError as exc:
        raise Problem(404, "topic-not-found", "Topic not found", str(exc)) from exc
    except EmbeddingError as exc:
        raise _embedder_down(exc) from exc
    return [SummaryOut.of(view) for view in views]


@router.get("/rooms/{room_id}/topics", responses=NOT_FOUND)
async def list_topics(
    room_id: str,
    user: CurrentUser,
    database: DatabaseDep,
    memory: MemoryDep,
    include_merged: bool = False,
) -> list[TopicOut]:
    """The room's topics with their aliases (merged names), related topics and summary counts."""
    room = await _room(database, room_id, user)
    views = await memory.topics.list_topics(scope=room_key(room.id), include_merged=include_merged)
    return [TopicOut.of(view) for view in views]


@router.get("/rooms/{room_id}/topics/search", responses=NOT_FOUND)
async def search_topics(
    room_id: str,
    q: Query_,
    user: CurrentUser,
    database: DatabaseDep,
    memory: MemoryDep,
    k: Annotated[int, Query(ge=1, le=50)] = 5,
) -> list[TopicHitOut]:
    """The room's topics whose name (or a merged alias) is closest to `q`."""
    room = await _room(database, room_id, user)
    try:
        hits = await memory.topics.search(scope=room_key(room.id), query=q, k=k)
    except EmbeddingError as exc:
        raise _embedder_down(exc) from exc
    return [TopicHitOut(id=h.topic.id, name=h.topic.name, score=h.score) for h in hits]


@router.get("/rooms/{room_id}/context", responses=NOT_FOUND)
async def preview_context(
    room_id: str,
    q: Query_,
    user: CurrentUser,
    database: DatabaseDep,
    memory: MemoryDep,
    topic: Annotated[str | None, Query(max_length=200)] = None,
) -> DualContextOut:
    """The dual context the assistant would get if the caller said `q` in this room now."""
    room = await _room(database, room_id, user)
    context = await memory.context.build(room=room, user=user, query=q, topic=topic)
    return DualContextOut.of(context)
