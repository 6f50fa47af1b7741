"""Bodies of the memory guard routes: message feedback and the staff cache audit."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from eko.api.schemas.inputs import InputText
from eko.guard.scope import Scope
from eko.guard.validation import MAX_ANSWER_CHARS, MAX_QUESTION_CHARS
from eko.store.guard_models import GuardEntry

Rating = Literal["up", "down"]
ScopeChoice = Literal["auto", "shared", "private"]
PERSONA_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"
# What a cache scope accepts as a user id (eko.guard.scope): anything else is a 422, not a 500.
PUBLIC_ID_PATTERN = r"^[A-Za-z0-9_.-]{1,64}$"


class FeedbackIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rating: Rating
    comment: InputText | None = Field(default=None, max_length=1000)


class FeedbackOut(BaseModel):
    message_id: str
    rating: Rating
    # The cache entry learned from this message (or that this cached answer came from).
    entry_id: str | None
    # True when this feedback created the entry.
    learned: bool
    # Why a thumbs up did not become an entry (personal_context, truncated, marked_invalid, …).
    refused: str | None
    # The same, as a sentence for a page (eko.guard.validation.refusal_text).
    refused_reason: str | None = None
    # True when this thumbs down withdrew the entry the same user's thumbs up had created.
    retracted: bool


class GuardEntryOut(BaseModel):
    id: str
    scope: str
    persona: str
    # Set for a private entry: the only user it is ever served to.
    user_public_id: str | None
    question: str
    answer: str
    metadata: dict[str, Any]
    status: str
    usage_count: int
    source_message_id: str | None
    created_at: datetime
    expires_at: datetime
    last_used_at: datetime | None
    obsoleted_at: datetime | None

    @classmethod
    def of(cls, entry: GuardEntry, *, max_age_days: int) -> GuardEntryOut:
        scope = Scope.parse(entry.scope)
        return cls(
            id=entry.id,
            scope=entry.scope,
            persona=scope.persona,
            user_public_id=scope.user_public_id,
            question=entry.question,
            answer=entry.answer,
            metadata=entry.meta or {},
            status=entry.status,
            usage_count=entry.usage_count,
            source_message_id=entry.source_message_id,
            created_at=entry.created_at,
            expires_at=entry.created_at + timedelta(days=max_age_days),
            last_used_at=entry.last_used_at,
            obsoleted_at=entry.obsoleted_at,
        )


class GuardEntryPage(BaseModel):
    items: list[GuardEntryOut]
    total: int


class GuardEntryCreate(BaseModel):
    """A staff-written entry: validated by construction."""

    model_config = ConfigDict(extra="forbid")
    question: InputText = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    answer: InputText = Field(min_length=1, max_length=MAX_ANSWER_CHARS)
    # Default: EKO_DEFAULT_PERSONA.
    persona: InputText | None = Field(default=None, pattern=PERSONA_PATTERN)
    # Make it private to this user instead of shared by everyone talking to the persona.
    user_public_id: InputText | None = Field(
        default=None, min_length=1, max_length=64, pattern=PUBLIC_ID_PATTERN
    )
    phase: InputText | None = Field(default=None, max_length=100)
    project: InputText | None = Field(default=None, max_length=100)
    tags: list[Annotated[InputText, Field(max_length=100)]] = Field(
        default_factory=list, max_length=20
    )
    initial_score: float | None = Field(default=None, ge=0, le=1)
    # Serve this entry to questions in any language (its answer suits them all); by default an
    # entry only answers questions in its own language.
    multilingual: bool = False


class GuardValidate(BaseModel):
    """Staff validation of any assistant message (the answer to the user message before it)."""

    model_config = ConfigDict(extra="forbid")
    message_id: InputText = Field(min_length=1, max_length=64)
    # auto: shared only when the writer said no personal context was used, else private to
    # the asker. Staff may decide shared or private; personal answers are never cached.
    scope: ScopeChoice = "auto"


class GuardLearnedOut(BaseModel):
    entry: GuardEntryOut
    created: bool


class GuardSearch(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: InputText = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    persona: InputText | None = Field(default=None, pattern=PERSONA_PATTERN)
    # Also search this user's private entries, as a lookup for that user would.
    user_public_id: InputText | None = Field(
        default=None, min_length=1, max_length=64, pattern=PUBLIC_ID_PATTERN
    )
    # Try another threshold than the configured one (nothing is served or counted).
    threshold: float | None = Field(default=None, ge=-1, le=1)


class GuardCandidateOut(BaseModel):
    entry: GuardEntryOut
    score: float
    above_threshold: bool
    # The false-hit check's verdict: {"passed", "failed": [rules], "details"}; null below the
    # threshold or with the check off.
    check: dict[str, Any] | None
    servable: bool


class GuardSearchOut(BaseModel):
    threshold: float
    embedder: str
    # The entry a user in these scopes would be served, and how it matched.
    served_entry_id: str | None
    match: Literal["exact", "semantic"] | None
    score: float | None
    candidates: list[GuardCandidateOut]


class GuardPruneOut(BaseModel):
    deleted: int
    max_age_days: int
