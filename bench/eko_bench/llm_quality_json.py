"""The orchestrator's real JSON contracts, on real-looking messages.

Each probe is rendered as the orchestrator renders its prompt for a contract — "full" (the
seed's, its system template with the registered nodes) or "compact" (the small-model one) —
with no docs scopes and a fresh pro user's state, then the conversation and the message to
route, and answered under that contract's output model. A probe counts as valid when the
answer parses and validates; the expected intents measure the routing (any listed intent is
a sensible route; 16 probes, half French, written for the bench).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, cast

from pydantic import BaseModel, ValidationError

from eko.llm.errors import ProviderError
from eko.llm.structured import output_schema
from eko.llm.types import ChatMessage, Provider, ProviderRequest


@dataclass(frozen=True, slots=True)
class JsonProbe:
    message: str
    intents: tuple[str, ...]  # any of these is a sensible route
    history: tuple[tuple[str, str], ...] = ()  # (speaker, text), oldest first


PROBES: tuple[JsonProbe, ...] = (
    JsonProbe("Bonjour Eko ! Comment ça va aujourd'hui ?", ("small_talk", "smalltalk_intro")),
    JsonProbe("Quelle est la capitale de l'Australie ?", ("general_question",)),
    JsonProbe(
        "Should I buy a used Clio or a new Sandero for driving in the city?",
        ("decision_support",),
    ),
    JsonProbe(
        "Merci beaucoup, bonne soirée !",
        ("amabilities",),
        history=(("User", "Tu peux me donner une recette de crêpes ?"), ("Eko", "Bien sûr …")),
    ),
    JsonProbe("Quel temps fera-t-il demain à Lyon ?", ("general_question",)),
    JsonProbe(
        "I feel overwhelmed at work and I can't sleep lately.",
        ("sensitive_question", "motivational_guidance"),
    ),
    JsonProbe("Qu'est-ce que tu sais faire exactement ?", ("functional_question",)),
    JsonProbe("Can you book me a table for two tonight at 8?", ("action_request",)),
    JsonProbe(
        "Mon fils de 3 ans a avalé une pile bouton, que faire ?!",
        ("urgent_request", "sensitive_question"),
    ),
    JsonProbe(
        "Write me a detailed six-month marketing plan for my bakery, with a budget.",
        ("deep_work", "professional_request"),
    ),
    JsonProbe("Thanks a lot, that was really helpful!", ("amabilities",)),
    JsonProbe(
        "J'hésite entre accepter une offre à Paris ou rester à Lyon, tu m'aides à peser le pour "
        "et le contre ?",
        ("decision_support",),
    ),
    JsonProbe(
        "Je n'arrive pas à me motiver pour courir ce matin, boost-moi !",
        ("motivational_guidance",),
    ),
    JsonProbe("How many minutes should I boil an egg for a runny yolk?", ("general_question",)),
    JsonProbe(
        "Oui vas-y",
        ("decision_support",),
        history=(
            ("User", "Aide-moi à choisir entre deux vélos électriques."),
            ("Eko", "Je peux comparer autonomie et prix, on y va ?"),
        ),
    ),
    JsonProbe(
        "Rédige une réponse polie à un patient qui veut décaler son rendez-vous de jeudi.",
        ("professional_request",),
    ),
)
CONTRACTS = ("full", "compact")


@dataclass(frozen=True, slots=True)
class JsonVerdict:
    valid: bool
    intent_ok: bool
    error: str = ""


def orchestrator_output_model(contract: str = "full") -> type[BaseModel]:
    from eko.chat.engine.orchestrator_contract import compact_output_model, output_model

    return compact_output_model((), web=False) if contract == "compact" else output_model(())


def orchestrator_messages(
    probe: JsonProbe, assistant_name: str = "Eko", contract: str = "full"
) -> list[ChatMessage]:
    from eko.chat.engine.orchestrator import COMPACT_SYSTEM_PROMPT, SYSTEM_PROMPT
    from eko.prompts.library import PromptLibrary
    from eko.prompts.templates import fill

    state: dict[str, Any] = {
        "smalltalk_intro_eligible": False,
        "smalltalk_target_key": None,
        "discovery_forced_and_open": False,
        "is_pro": True,
        "quota_state": "normal",
        "capabilities": {},
        "previous_intent": None,
        "previous_mode": None,
        "short_reply": False,
        "amabilities": False,
    }
    if contract == "compact":  # the orchestrator's compact state, as it builds it
        compact = {"smalltalk_intro_eligible": False, "previous_intent": None}
        system = fill(
            PromptLibrary().text(COMPACT_SYSTEM_PROMPT),
            scopes="(none)",
            state=json.dumps(compact, ensure_ascii=False),
        )
    else:
        system = fill(
            PromptLibrary().text(SYSTEM_PROMPT),
            nodes=_node_descriptions(),
            scopes="(none)",
            state=json.dumps(state, ensure_ascii=False),
        )
    lines = [
        f"{assistant_name if speaker == 'Eko' else speaker}: {text}"
        for speaker, text in probe.history
    ]
    conversation = "\n".join(lines) or "(empty)"
    user = f"Conversation (oldest first):\n{conversation}\n\nMessage to route:\n{probe.message}"
    return [ChatMessage("system", system), ChatMessage("user", user)]


@dataclass(frozen=True, slots=True)
class RoutedProbe:
    verdict: JsonVerdict
    answer: str
    seconds: float


async def route_probe(
    provider: Provider,
    probe: JsonProbe,
    *,
    contract: str,
    assistant_name: str,
    max_tokens: int,
) -> RoutedProbe:
    """The probe routed by `provider` under `contract` (temperature 0), judged; a provider
    error is an answer that does not validate, never a crash."""
    output = orchestrator_output_model(contract)
    request = ProviderRequest(
        messages=tuple(orchestrator_messages(probe, assistant_name, contract)),
        json_schema=output_schema(output),
        max_tokens=max_tokens,
        temperature=0.0,
    )
    began = time.perf_counter()
    try:
        answer = (await provider.generate(request)).text
    except ProviderError as exc:
        answer = f"<error: {exc}>"
    seconds = time.perf_counter() - began
    return RoutedProbe(judge(answer, probe, output), answer, seconds)


def judge(answer: str, probe: JsonProbe, output: type[BaseModel]) -> JsonVerdict:
    try:
        data = output.model_validate_json(answer)
    except ValidationError as exc:
        return JsonVerdict(valid=False, intent_ok=False, error=str(exc.errors()[:1])[:200])
    payload = getattr(data, "payload", data)  # the compact contract has no payload level
    intent = str(getattr(payload, "intent", ""))
    return JsonVerdict(valid=True, intent_ok=intent in probe.intents)


def _node_descriptions() -> str:
    """The registry's own lines (its node factories only keep their dependencies)."""
    from eko.chat.engine.nodes import (
        context_node,
        docs_chunks_node,
        quota_node,
        response_writer_node,
        web_search_node,
    )
    from eko.chat.engine.registry import NodeRegistry

    none = cast(Any, None)
    registry = NodeRegistry(
        [
            context_node(none, timeout_s=1),
            quota_node(none, timeout_s=1),
            docs_chunks_node(none, max_chars=1, timeout_s=1),
            web_search_node(none, max_results=1, max_chars=1, timeout_s=1),
            response_writer_node(none, timeout_s=1),
        ]
    )
    return registry.describe()
