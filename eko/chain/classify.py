"""classify_complexity(message, route) -> "simple" | "reflexive" (seed: auto-detection).

Deterministic rules, first match wins (case- and accent-insensitive, whole words):

1. an empty message: simple;
2. the route (a category from routing, e.g. the orchestrator's) is a simple one: simple;
3. the route is a reflexive category (code, archi, data-analyst, raisonnement): reflexive;
4. a complex keyword (analyse, compare, cherche et explique, détaillé…): reflexive;
5. a request that needs tools (a file, the workspace, the docs, the web, remembering…): reflexive;
6. a short message (< 50 characters): simple;
7. a long message (>= 400 characters) or a multi-part one (2+ questions, 3+ lines): reflexive;
8. otherwise: simple.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from eko.text import fold

Complexity = Literal["simple", "reflexive"]

KEYWORDS = (
    "analyse",
    "analyser",
    "analyze",
    "analysis",
    "compare",
    "comparer",
    "comparaison",
    "comparison",
    "cherche et explique",
    "search and explain",
    "find and explain",
    "détaillé",
    "détaillée",
    "en détail",
    "detailed",
    "in detail",
    "étape par étape",
    "step by step",
    "explique pourquoi",
    "explain why",
    "avantages et inconvénients",
    "pros and cons",
    "évalue",
    "evaluate",
)
CATEGORIES = ("code", "archi", "data-analyst", "raisonnement", "reasoning")
SIMPLE_CATEGORIES = ("simple", "smalltalk")
TOOL_WORDS = (
    "query_db",
    "pipeline",
    "list_dir",
    "read_file",
    "grep",
    "workspace",
    "fichier",
    "fichiers",
    "dossier",
    "répertoire",
    "file",
    "files",
    "folder",
    "directory",
    "documentation",
    "dans la doc",
    "in the docs",
    "sur le web",
    "on the web",
    "sur internet",
    "search the web",
    "souviens-toi",
    "rappelle-toi",
    "remember that",
    "dans ma mémoire",
    "in my memory",
)


@dataclass(frozen=True, slots=True)
class ComplexityRules:
    short_chars: int = 50
    long_chars: int = 400
    multi_questions: int = 2
    multi_lines: int = 3
    keywords: tuple[str, ...] = KEYWORDS
    categories: tuple[str, ...] = CATEGORIES
    simple_categories: tuple[str, ...] = SIMPLE_CATEGORIES
    tool_words: tuple[str, ...] = TOOL_WORDS


@dataclass(frozen=True, slots=True)
class Classification:
    mode: Complexity
    # The rule that decided: empty, route_simple, category:<c>, keyword:<k>, tools:<w>, short,
    # long, multi_part, default.
    rule: str


def classify(
    message: str, route: str | None = None, rules: ComplexityRules | None = None
) -> Classification:
    rules = rules or ComplexityRules()
    text = message.strip()
    if not text:
        return Classification("simple", "empty")
    category = fold(route or "")
    if category and category in {fold(c) for c in rules.simple_categories}:
        return Classification("simple", "route_simple")
    if category and category in {fold(c) for c in rules.categories}:
        return Classification("reflexive", f"category:{route}")
    folded = fold(text)
    for keyword in rules.keywords:
        if _has(folded, keyword):
            return Classification("reflexive", f"keyword:{keyword}")
    for word in rules.tool_words:
        if _has(folded, word):
            return Classification("reflexive", f"tools:{word}")
    if len(text) < rules.short_chars:
        return Classification("simple", "short")
    if len(text) >= rules.long_chars:
        return Classification("reflexive", "long")
    lines = [line for line in text.splitlines() if line.strip()]
    if text.count("?") >= rules.multi_questions or len(lines) >= rules.multi_lines:
        return Classification("reflexive", "multi_part")
    return Classification("simple", "default")


def classify_complexity(
    message: str, route: str | None = None, rules: ComplexityRules | None = None
) -> Complexity:
    """The seed's classifyComplexity: "simple" or "reflexive"."""
    return classify(message, route, rules).mode


def _has(folded_text: str, phrase: str) -> bool:
    pattern = r"(?<![\w-])" + re.escape(fold(phrase)) + r"(?![\w-])"
    return re.search(pattern, folded_text) is not None
