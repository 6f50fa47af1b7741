"""Memory guard routes: feedback on answers (members), and the cache audit (staff only).

POST   /v1/messages/{id}/feedback       rate an assistant message (thumbs up: for the rater)
GET    /v1/staff/memory                 list entries (filters, newest first)
POST   /v1/staff/memory                 create an entry directly
POST   /v1/staff/memory/search          what a question would be served, with every candidate
POST   /v1/staff/memory/validate        learn any assistant message (may publish it)
POST   /v1/staff/memory/prune           delete expired entries now
GET    /v1/staff/memory/{id}            one entry
POST   /v1/staff/memory/{id}/obsolete   never serve it again (kept for audit)
DELETE /v1/staff/memory/{id}            delete it
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response, status

from eko.api.deps import (
    CurrentUser,
    DatabaseDep,
    PromptsDep,
    ServicesDep,
    SettingsDep,
    StaffUser,
    room_for_user,
)
from eko.api.problems import Problem, problem_responses
from eko.api.schemas.guard import (
    PERSONA_PATTERN,
    FeedbackIn,
    FeedbackOut,
    GuardCandidateOut,
    GuardEntryCreate,
    GuardEntryOut,
    GuardEntryPage,
    GuardLearnedOut,
    GuardPruneOut,
    GuardSearch,
    GuardSearchOut,
    GuardValidate,
)
from eko.api.schemas.inputs import MAX_QUERY_INT
from eko.chat.feedback import FeedbackService, NotAnAnswer
from eko.embed.base import EmbeddingError
from eko.guard.scope import Scope, lookup_scopes
from eko.guard.service import GuardService, NotLearnable
from eko.guard.validation import refusal_text
from eko.prompts.library import PromptLibrary
from eko.store import messages as message_repo
from eko.store import users as user_repo
from eko.store.db import Database
from eko.store.guard_models import GuardEntry

router = APIRouter(prefix="/v1", tags=["memory guard"])
STAFF_ONLY = problem_responses(403)
STAFF_ONLY_404 = problem_responses(403, 404)


async def get_guard(services: ServicesDep) -> GuardService:
    return services.guard


async def get_feedback(services: ServicesDep) -> FeedbackService:
    return services.feedback


GuardDep = Annotated[GuardService, Depends(get_guard)]
FeedbackDep = Annotated[FeedbackService, Depends(get_feedback)]


def _out(entry: GuardEntry, guard: GuardService) -> GuardEntryOut:
    return GuardEntryOut.of(entry, max_age_days=guard.max_age_days)


def _embedder_down(exc: EmbeddingError) -> Problem:
    return Problem(503, "embedder-unavailable", "Embedder unavailable", str(exc)[:300])


async def _entry(guard: GuardService, entry_id: str) -> GuardEntry:
    entry = await guard.get(entry_id)
    if entry is None:
        raise Problem(404, "entry-not-found", "Cache entry not found", f"No entry {entry_id!r}.")
    return entry


def _persona(prompts: PromptLibrary, persona: str | None, default: str) -> str:
    chosen = persona or default
    if not prompts.has_persona(chosen):
        raise Problem(
            422,
            "unknown-persona",
            "Unknown persona",
            f"No persona {chosen!r}; available: {', '.join(prompts.personas())}.",
        )
    return chosen


async def _user_exists(database: Database, public_id: str) -> None:
    async with database.session() as session:
        if await user_repo.get_by_public_id(session, public_id=public_id) is None:
            raise Problem(404, "user-not-found", "User not found", f"No user {public_id!r}.")


# --- feedback (any member of the message's room) ---


@router.post("/messages/{message_id}/feedback", responses=problem_responses(404))
async def post_feedback(
    message_id: str,
    body: FeedbackIn,
    user: CurrentUser,
    database: DatabaseDep,
    feedback: FeedbackDep,
) -> FeedbackOut:
    """Rate an assistant answer. Thumbs up validates it for the rater alone: it is learned into
    their private memory guard scope (never served to anyone else; a vote towards the shared
    scope when EKO_GUARD_SHARED_MIN_AGREEING_USERS is set) unless it used personal context, is
    marked `<non valide>`, was cut short or is a fallback."""
    async with database.session() as session:
        message = await message_repo.get_message(session, message_id=message_id)
        if message is not None:
            try:
                await room_for_user(session, room_id=message.room_id, user=user)
            except Problem:
                message = None  # not a member: indistinguishable from a missing message
    if message is None:
        raise Problem(404, "message-not-found", "Message not found", f"No message {message_id!r}.")
    try:
        outcome = await feedback.rate(
            message_id=message_id, user=user, rating=body.rating, comment=body.comment
        )
    except NotAnAnswer as exc:
        raise Problem(422, "not-an-answer", "Not an assistant answer", str(exc)) from exc
    effect = outcome.guard
    return FeedbackOut(
        message_id=outcome.message.id,
        rating=outcome.rating,
        entry_id=effect.entry_id,
        learned=effect.learned,
        refused=effect.refused,
        refused_reason=refusal_text(effect.refused) if effect.refused else None,
        retracted=effect.retracted,
    )


# --- staff audit ---


@router.get("/staff/memory", responses=STAFF_ONLY)
async def list_entries(
    _staff: StaffUser,
    guard: GuardDep,
    persona: Annotated[str | None, Query(pattern=PERSONA_PATTERN)] = None,
    scope: Annotated[str | None, Query(max_length=200)] = None,
    status_: Annotated[str | None, Query(alias="status", pattern="^(active|obsolete)$")] = None,
    q: Annotated[str | None, Query(max_length=200, description="text in question/answer")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_QUERY_INT)] = 0,
) -> GuardEntryPage:
    """Entries, newest first; `persona` includes that persona's private entries."""
    items, total = await guard.list_entries(
        scope=scope, persona=persona, status=status_, text=q, limit=limit, offset=offset
    )
    return GuardEntryPage(items=[_out(e, guard) for e in items], total=total)


@router.post("/staff/memory", status_code=status.HTTP_201_CREATED, responses=STAFF_ONLY_404)
async def create_entry(
    body: GuardEntryCreate,
    staff: StaffUser,
    guard: GuardDep,
    database: DatabaseDep,
    prompts: PromptsDep,
    settings: SettingsDep,
) -> GuardEntryOut:
    persona = _persona(prompts, body.persona, settings.default_persona)
    if body.user_public_id is not None:
        await _user_exists(database, body.user_public_id)
    meta = {
        "phase": body.phase,
        "project": body.project,
        "authors": [f"staff:{staff.public_id}"],
        "initial_score": body.initial_score,
        "tags": body.tags,
        "validated_by": "staff",
    }
    if body.multilingual:
        meta["multilingual"] = True
    try:
        learned = await guard.learn(
            question=body.question,
            answer=body.answer,
            scope=Scope(persona, body.user_public_id),
            meta=meta,
        )
    except NotLearnable as exc:
        raise Problem(
            422, "not-learnable", "Not learnable", refusal_text(exc.reason), reason=exc.reason
        ) from exc
    except EmbeddingError as exc:
        raise _embedder_down(exc) from exc
    return _out(learned.entry, guard)


@router.post("/staff/memory/search", responses=STAFF_ONLY)
async def search_entries(
    body: GuardSearch,
    _staff: StaffUser,
    guard: GuardDep,
    prompts: PromptsDep,
    settings: SettingsDep,
) -> GuardSearchOut:
    """What this question would be served (nothing is served or counted), and why."""
    persona = _persona(prompts, body.persona, settings.default_persona)
    scopes = (
        lookup_scopes(persona, body.user_public_id) if body.user_public_id else [Scope(persona)]
    )
    try:
        result = await guard.lookup(
            body.question, scopes, record_use=False, threshold=body.threshold
        )
    except EmbeddingError as exc:
        raise _embedder_down(exc) from exc
    hit = result.hit
    candidates: list[GuardCandidateOut] = []
    if result.decision is not None:
        candidates = [
            GuardCandidateOut(
                entry=_out(j.candidate.item, guard),
                score=round(j.candidate.score, 4),
                above_threshold=j.above_threshold,
                check=None if j.check is None else j.check.as_meta(),
                servable=j.servable,
            )
            for j in result.decision.judged
        ]
    elif hit is not None:
        candidates = [
            GuardCandidateOut(
                entry=_out(hit.entry, guard),
                score=1.0,
                above_threshold=True,
                check=None,
                servable=True,
            )
        ]
    return GuardSearchOut(
        threshold=result.threshold,
        embedder=guard.embedder_name,
        served_entry_id=hit.entry.id if hit else None,
        match="exact" if hit and hit.match == "exact" else ("semantic" if hit else None),
        score=round(hit.score, 4) if hit else None,
        candidates=candidates,
    )


@router.post(
    "/staff/memory/validate",
    responses={
        **STAFF_ONLY_404,
        201: {"model": GuardLearnedOut, "description": "Learned as a new entry"},
    },
)
async def validate_message(
    body: GuardValidate,
    staff: StaffUser,
    guard: GuardDep,
    database: DatabaseDep,
    services: ServicesDep,
    response: Response,
) -> GuardLearnedOut:
    """Learn an assistant message as the answer to the question it replied to. Staff are
    trusted with the shared scope: `auto` shares an answer the writer reported as free of
    personal context, `shared` / `private` choose."""
    async with database.session() as session:
        message = await message_repo.get_message(session, message_id=body.message_id)
    if message is None:
        raise Problem(
            404, "message-not-found", "Message not found", f"No message {body.message_id!r}."
        )
    outcome = await services.conversation_guard.learning.learn_reply(
        message,
        validated_by="staff",
        author=f"staff:{staff.public_id}",
        scope_choice=body.scope,
    )
    if outcome.learned is None:
        reason = outcome.refused or "refused"
        if reason == "embedder_unavailable":
            raise Problem(503, "embedder-unavailable", "Embedder unavailable")
        raise Problem(422, "not-learnable", "Not learnable", refusal_text(reason), reason=reason)
    response.status_code = (
        status.HTTP_201_CREATED if outcome.learned.created else status.HTTP_200_OK
    )
    learned = outcome.learned
    return GuardLearnedOut(entry=_out(learned.entry, guard), created=learned.created)


@router.post("/staff/memory/prune", responses=STAFF_ONLY)
async def prune_entries(_staff: StaffUser, guard: GuardDep) -> GuardPruneOut:
    return GuardPruneOut(deleted=await guard.prune(), max_age_days=guard.max_age_days)


@router.get("/staff/memory/{entry_id}", responses=STAFF_ONLY_404)
async def get_entry(entry_id: str, _staff: StaffUser, guard: GuardDep) -> GuardEntryOut:
    return _out(await _entry(guard, entry_id), guard)


@router.post("/staff/memory/{entry_id}/obsolete", responses=STAFF_ONLY_404)
async def obsolete_entry(entry_id: str, staff: StaffUser, guard: GuardDep) -> GuardEntryOut:
    entry = await guard.mark_obsolete(entry_id, reason="staff", by=f"staff:{staff.public_id}")
    if entry is None:
        raise Problem(404, "entry-not-found", "Cache entry not found", f"No entry {entry_id!r}.")
    return _out(entry, guard)


@router.delete(
    "/staff/memory/{entry_id}", status_code=status.HTTP_204_NO_CONTENT, responses=STAFF_ONLY_404
)
async def delete_entry(entry_id: str, _staff: StaffUser, guard: GuardDep) -> None:
    if not await guard.delete(entry_id):
        raise Problem(404, "entry-not-found", "Cache entry not found", f"No entry {entry_id!r}.")
