"""Settings of the dual context's single budget and multi-hop recall: a section of
eko.config.Settings (read from EKO_* like every other setting). See eko/memory/budget.py."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ContextBudgetSettings(BaseModel):
    # --- one budget for the dual context (eko/memory/budget.py, eko/memory/multihop.py) ---
    # Characters of the whole context block (recent turns, facts, recalled turns, summaries),
    # section headings included. 0: off, each source keeps its own cap (recent_max_chars,
    # memory_context_max_items, memory_recall_max_chars, rag_max_summaries). The rule: recent
    # turns first (at most recent_max_chars and the recent share of the budget), then facts
    # (at most the facts share), then recalled turns and summaries interleaved by rank
    # (memory_context_turns_per_summary turns, then one summary, ...) until the budget is full.
    memory_context_max_chars: int = Field(default=8000, ge=0, le=200_000)
    memory_context_recent_share: float = Field(default=0.5, ge=0, le=1)
    memory_context_facts_share: float = Field(default=0.2, ge=0, le=1)
    # 12: on the bench's dev-q questions (extractive summaries), with speaker-aware turn
    # recall, 78.1% at 8k vs 76.2% with 6 and 78.8% with 50 (summaries only when turns run
    # out); a model's summaries say more than the extractive stand-in's, so they keep a share.
    memory_context_turns_per_summary: int = Field(default=12, ge=1, le=50)
    # A question needing several pieces (two people, "both", a list) is split by rule into
    # sub-queries whose recalled turns are interleaved by rank (no model call).
    memory_multihop_enabled: bool = True
    # ... and, for those questions only, the model is asked once for this many things the
    # people might have said ("I went camping with the kids"), each recalled as one more
    # sub-query (eko/memory/query_expansion.py; purpose "memory_expand" in llm_calls). On the
    # dev questions with the bundled model, 3 beat 5 and 8 (fewer guesses, more room for the
    # question's own hits). 0: off, the rule alone (no model call).
    memory_recall_expand: int = Field(default=3, ge=0, le=8)
    # The longest wait for those phrases; past it the context is built without them (a local
    # model busy with another answer). Keep it below chat_node_timeout_s.
    memory_recall_expand_timeout_s: float = Field(default=8.0, gt=0)
    # A fact in the context pulls the turn it was learned from into the recalled turns.
    memory_fact_source_turns: bool = True
    # And back: the facts drawn from the recalled turns join the context (after the facts
    # found by meaning, within the facts share), at most this many. 0: off.
    memory_turn_facts: int = Field(default=5, ge=0, le=50)
