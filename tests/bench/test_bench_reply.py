"""`eko bench reply` end to end with a scripted model: every question posted through the API,
timed, scored by content, background work queued, the long message cut-reported."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

from eko.config import Settings
from eko.embed.hashing import HashEmbedder
from eko.llm.providers import FunctionModel
from eko_bench.bench_reply import run
from eko_bench.llm_quality import QA_SYSTEM_PROMPT

ROUTE = (
    '{"confidence": 0.9, "decision": "route", "notes": "", "payload": {"intent": '
    '"general_question", "context_level": "light", "need_web": false, "web_search_prompt": "", '
    '"scope_need": false, "scopes_selected": []}}'
)


async def test_reply_bench_posts_scores_and_queues_background_work(tmp_path: Path) -> None:
    data = tmp_path / "qa.jsonl"
    rows = [
        {"id": "a", "lang": "fr", "question": "Capitale de l'Australie ?", "accept": ["Canberra"]},
        {"id": "b", "lang": "en", "question": "17 times 23?", "accept": ["391"]},
        {"id": "c", "lang": "en", "question": "Capital of Canada?", "accept": ["Ottawa"]},
    ]
    data.write_text("\n".join(json.dumps(row) for row in rows), encoding="utf-8")

    def model(request: object) -> str:
        if getattr(request, "json_schema", None) is not None:
            return ROUTE
        return "Canberra." if getattr(request, "priority", "") == "interactive" else "{}"

    output = io.StringIO()
    settings = Settings(_env_file=None)
    results = await run(
        settings=settings,
        console=Console(file=output, width=250),
        data=data,
        limit=3,
        providers=[FunctionModel(model)],
        embedder=HashEmbedder(),
    )
    result, bare = results
    assert bare.bare and [reply.right for reply in bare.replies] == [True, False, False]
    assert len(result.replies) == 3
    # Scored by content: only the question whose expected word is in the answer is right.
    assert [reply.right for reply in result.replies] == [True, False, False]
    assert result.long_reply is not None and result.long_reply.answer == "Canberra."
    assert result.background_calls > 0  # memory extraction ran behind the replies
    table = output.getvalue()
    assert "1/3 (baseline" in table and "prompt cache on" in table


async def test_compare_contract_runs_again_with_the_full_contract(tmp_path: Path) -> None:
    data = tmp_path / "qa.jsonl"
    rows = [
        {"id": "a", "lang": "fr", "question": "Capitale de l'Australie ?", "accept": ["Canberra"]},
        {"id": "b", "lang": "en", "question": "17 times 23?", "accept": ["391"]},
    ]
    data.write_text("\n".join(json.dumps(row) for row in rows), encoding="utf-8")
    contracts: list[str] = []

    def model(request: object) -> str:
        schema = getattr(request, "json_schema", None)
        if schema is not None and "intent" in schema.get("properties", {}):
            contracts.append("compact")
            return '{"intent": "general_question", "context_level": "light"}'
        if schema is not None and "payload" in schema.get("properties", {}):
            contracts.append("full")
            return ROUTE
        return "Canberra." if getattr(request, "priority", "") == "interactive" else "{}"

    small = FunctionModel(model)
    small.prefers_compact_output = True
    output = io.StringIO()
    results = await run(
        settings=Settings(_env_file=None, orchestrator_router="model"),
        console=Console(file=output, width=250),
        data=data,
        limit=2,
        compare_contract=True,
        long_message=False,
        providers=[small],
        embedder=HashEmbedder(),
    )
    assert [r.label for r in results] == [
        "prompt cache on, contract auto, router model",
        "prompt cache on, contract full",
        "bare model (eko bench llm's one-line prompt, no Eko)",
    ]
    assert contracts == ["compact", "compact", "full", "full"]
    assert all(reply.right == (i == 0) for r in results for i, reply in enumerate(r.replies))


async def test_compare_router_runs_again_with_the_models_route(tmp_path: Path) -> None:
    """A small model routes by rules (no orchestrator call); --compare-router asks it."""
    data = tmp_path / "qa.jsonl"
    rows = [
        {"id": "a", "lang": "fr", "question": "Capitale de l'Australie ?", "accept": ["Canberra"]},
        {"id": "b", "lang": "en", "question": "17 times 23?", "accept": ["391"]},
    ]
    data.write_text("\n".join(json.dumps(row) for row in rows), encoding="utf-8")
    routed: list[str] = []

    def model(request: object) -> str:
        if getattr(request, "json_schema", None) is not None:
            if getattr(request, "priority", "") == "interactive":
                routed.append("model")
                return '{"intent": "general_question", "context_level": "light"}'
            return "{}"
        return "Canberra." if getattr(request, "priority", "") == "interactive" else "{}"

    small = FunctionModel(model)
    small.prefers_compact_output = True
    results = await run(
        settings=Settings(_env_file=None),
        console=Console(file=io.StringIO(), width=250),
        data=data,
        limit=2,
        compare_router=True,
        long_message=False,
        providers=[small],
        embedder=HashEmbedder(),
    )
    assert [r.label for r in results][:2] == [
        "prompt cache on, contract auto, router auto",
        "prompt cache on, contract auto, router model",
    ]
    assert routed == ["model", "model"]  # the second configuration only
    assert [r.orchestrator_s for r in results[0].replies] == [0.0, 0.0]
    assert all(reply.right == (i == 0) for r in results for i, reply in enumerate(r.replies))


async def test_the_bare_model_row_asks_the_same_questions_without_eko(tmp_path: Path) -> None:
    """The bare row is the same provider asked directly with bench llm's prompt: a model that
    answers right only without Eko's instructions scores there and not in the pipeline, and
    the run says the pipeline is below it."""
    data = tmp_path / "qa.jsonl"
    rows = [
        {"id": "a", "lang": "en", "question": "Capital of Australia?", "accept": ["Canberra"]},
        {"id": "b", "lang": "en", "question": "Capital of Canada?", "accept": ["Ottawa"]},
    ]
    data.write_text("\n".join(json.dumps(row) for row in rows), encoding="utf-8")
    answers = {"Capital of Australia?": "Canberra.", "Capital of Canada?": "Ottawa."}

    def model(request: object) -> str:
        if getattr(request, "json_schema", None) is not None:
            return ROUTE
        messages = getattr(request, "messages", ())
        if messages and messages[0].content == QA_SYSTEM_PROMPT:
            return answers[messages[-1].content]
        return "Melbourne." if getattr(request, "priority", "") == "interactive" else "{}"

    output = io.StringIO()
    results = await run(
        settings=Settings(_env_file=None),
        console=Console(file=output, width=250),
        data=data,
        limit=2,
        long_message=False,
        providers=[FunctionModel(model)],
        embedder=HashEmbedder(),
    )
    pipeline, bare = results
    assert [reply.answer for reply in bare.replies] == ["Canberra.", "Ottawa."]
    assert [reply.right for reply in bare.replies] == [True, True]
    assert [reply.right for reply in pipeline.replies] == [False, False]
    text = output.getvalue()
    assert "2/2 (baseline" in text and "0/2 (baseline" in text
    assert "below the bare model (2/2): prompt cache on" in text
