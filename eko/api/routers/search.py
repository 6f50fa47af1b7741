"""Search over the caller's conversations: titles and message text (the full-text index).

GET /v1/search?q=…&limit=…
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from eko.api.deps import CurrentUser, DatabaseDep, SessionDep, SettingsDep
from eko.api.problems import Problem, problem_responses
from eko.api.room_titles import with_titles
from eko.api.schemas.search import MessageFound, SearchOut
from eko.store import rooms as room_repo
from eko.store.message_search import query_words
from eko.store.room_search import search_user_messages
from eko.text import fold

router = APIRouter(prefix="/v1", tags=["search"])
SNIPPET_CHARS = 160


@router.get("/search", responses=problem_responses(422))
async def search(
    user: CurrentUser,
    session: SessionDep,
    database: DatabaseDep,
    settings: SettingsDep,
    q: Annotated[str, Query(min_length=1, max_length=500)],
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> SearchOut:
    """The caller's rooms (those they are a member of) whose title holds every word of `q`,
    and their messages holding every significant word of it, best first."""
    query = " ".join(q.split())
    if not query:
        raise Problem(422, "empty-query", "Empty query", "Type at least one word to search for.")
    if "\x00" in query:
        raise Problem(422, "bad-query", "Bad query", "NUL characters are not accepted.")
    rooms = await with_titles(
        session,
        await room_repo.list_rooms_for_user(session, user_id=user.id),
        settings.assistant_name,
    )
    needles = fold(query).split()
    titled = [r for r in rooms if all(n in fold(r.title) for n in needles)][:limit]
    by_id = {r.id: r for r in rooms}
    hits = await search_user_messages(
        session, dialect=database.dialect, user_id=user.id, query=query, limit=limit
    )
    words = query_words(query)
    found = [
        MessageFound(
            room_id=hit.room_id,
            room_kind=by_id[hit.room_id].kind if hit.room_id in by_id else "direct",
            room_title=by_id[hit.room_id].title if hit.room_id in by_id else "",
            message_id=hit.message_id,
            seq=hit.seq,
            role=hit.role,
            snippet=snippet(hit.content, words),
        )
        for hit in hits
    ]
    return SearchOut(query=query, rooms=titled, messages=found)


def snippet(content: str, words: list[str], width: int = SNIPPET_CHARS) -> str:
    """`content` on one line, cut to `width` characters around the first of `words` it holds
    (an ellipsis where it is cut)."""
    line = " ".join(content.split())
    folded = fold(line)
    # Folding may change the length (ß -> ss): then positions do not carry over; start at 0.
    found = [i for w in words if (i := folded.find(w)) >= 0] if len(folded) == len(line) else []
    start = max(0, min(found) - width // 4) if found else 0
    cut = line[start : start + width]
    return ("…" if start else "") + cut + ("…" if start + width < len(line) else "")
