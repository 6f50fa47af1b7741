"""Answer quality, step 1: every stored question learned, every asked one looked up.

Each set of pairs (the QQP-format file, the French set) gets its own scope in a fresh database
of the chosen backend (SQLite or PostgreSQL, eko_bench.databases): every distinct `text_a`
learned through GuardService.learn, every `text_b` looked up through GuardService.lookup (the
real index, the real candidates). The lookup runs with the check off and returns every
candidate, so metrics.py can replay the serving rule (the same `decide` and `false_hit_check`
the service runs) for any threshold, rule set or mode without looking up again.

A pair the guard refuses (its stored question may not become an entry, or its asked question
never gets a cached answer: "Ok", "A", empty once normalized, a statement) is kept with the
refusal's code, no candidates, and is skipped and counted by the report, never measured.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from eko.config import Settings
from eko.guard.decide import Candidate
from eko.guard.language import detect_language
from eko.guard.normalize import normalize_question
from eko.guard.scope import Scope
from eko.guard.service import GuardService, NotLearnable
from eko.store.vectors import build_vector_index
from eko_bench.databases import fresh_database
from eko_bench.guard.pairs import CachedEmbedder, Pair


@dataclass(frozen=True, slots=True)
class Asked:
    """One asked question (a pair's text_b) and what the index returned for it."""

    pair: Pair
    language: str  # the file's `lang`, else detected
    exact: str | None  # a stored question with the same normalized text, if any
    candidates: list[Candidate[str]]  # item = the stored question's text
    # Why the guard refuses this pair ("stored:not_a_question", "asked:empty_question"…);
    # None for a pair it looks up.
    refused: str | None = None

    @property
    def question(self) -> str:
        return self.pair.text_b

    def right(self, served: str) -> bool:
        """Served its own text_a, and the data set says they are the same question."""
        return self.pair.label == 1 and normalize_question(served) == normalize_question(
            self.pair.text_a
        )


async def look_up_all(
    settings: Settings,
    embedder: CachedEmbedder,
    sets: Mapping[str, Sequence[Pair]],
    backend: str = "sqlite",
) -> tuple[dict[str, list[Asked]], dict[str, float]]:
    """Learn and look up each set in its own scope of a fresh `backend` database; returns the
    asked questions per set."""
    timings: dict[str, float] = {}
    started = time.perf_counter()
    texts = [t for pairs in sets.values() for p in pairs for t in (p.text_a, p.text_b)]
    embedded = await embedder.warm(texts)
    timings["embed_s"] = time.perf_counter() - started
    timings["embedded"] = float(embedded)
    out: dict[str, list[Asked]] = {}
    async with fresh_database(backend) as database:
        guard = GuardService(
            database=database,
            vectors=build_vector_index(database, settings),
            embedder=embedder,
            threshold=-1.0,
            auto_prune=False,
            # Every candidate comes back; metrics.py replays the check and the rules.
            false_hit_check=False,
            candidates=settings.guard_candidates,
        )
        for name, pairs in sets.items():
            out[name] = await _one_set(guard, Scope(f"bench-{name}"), pairs)
    timings["total_s"] = time.perf_counter() - started
    return out, timings


async def _one_set(guard: GuardService, scope: Scope, pairs: Sequence[Pair]) -> list[Asked]:
    refused: dict[str, str] = {}  # stored question -> why it could not be learned
    for i, question in enumerate(dict.fromkeys(p.text_a for p in pairs)):
        try:
            await guard.learn(question=question, answer=f"answer {i}", scope=scope)
        except NotLearnable as exc:
            refused[question] = exc.reason
    by_text = {
        normalize_question(q): q for q in dict.fromkeys(p.text_a for p in pairs) if q not in refused
    }
    asked = []
    for pair in pairs:
        language = pair.lang or detect_language(pair.text_b)
        if pair.text_a in refused:
            asked.append(Asked(pair, language, None, [], f"stored:{refused[pair.text_a]}"))
            continue
        result = await guard.lookup(pair.text_b, [scope], record_use=False)
        if result.refused is not None or not normalize_question(pair.text_b):
            reason = result.refused or "empty_question"
            asked.append(Asked(pair, language, None, [], f"asked:{reason}"))
            continue
        judged = result.decision.judged if result.decision else []
        candidates = [
            Candidate(
                j.candidate.question,
                j.candidate.question,
                j.candidate.score,
                j.candidate.created_at,
            )
            for j in judged
        ]
        asked.append(
            Asked(pair, language, by_text.get(normalize_question(pair.text_b)), candidates)
        )
    return asked
