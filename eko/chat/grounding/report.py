"""What the grounding rules did for one reply: `ReplyMeta.grounding` (set only when the
message asked a fact of the user's life)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

# The flagged reply is kept this long in the metadata (what was replaced, for review).
ORIGINAL_MAX_CHARS = 300


class GroundingReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # The question's subject: a topic ("sister", "home"), the noun after "my", or "self".
    subject: str
    # Something the writer was given mentions the subject (facts, recent turns, memory).
    remembered: bool
    # The writer's prompt said memory has nothing on it (writer/grounding/note_*.md).
    note: bool = False
    # The reply was checked after the writer (only when the note was given).
    checked: bool = False
    # The reply claimed to know (no "I don't know", not only a question back) ...
    flagged: bool = False
    # ... and was replaced by writer/grounding/dont_know_*.md.
    corrected: bool = False
    # The flagged reply as the model wrote it (cut to ORIGINAL_MAX_CHARS).
    original: str | None = None
