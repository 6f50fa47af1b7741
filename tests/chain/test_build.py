"""Building the chain from settings: auto on/off, per-stage providers, native tools."""

from __future__ import annotations

from pathlib import Path

import pytest

from eko.chain.build import build_chain, complexity_rules, stage_providers
from eko.chain.classify import classify
from eko.chain.native_tools import NativeToolsProvider
from eko.chain.tools import build_tools
from eko.config import ProviderConfig, Settings
from eko.llm.errors import ProviderUnavailable
from eko.llm.providers import FunctionModel
from eko.llm.providers.openai_compat import OpenAICompatProvider
from eko.llm.recording import MemoryRecorder
from eko.llm.runtime import LLMRuntime
from eko.llm.types import ProviderRequest
from eko.prompts.library import PromptLibrary
from eko_bench.chain_scripts import context


def _settings(**values: object) -> Settings:
    return Settings(_env_file=None, **values)  # type: ignore[arg-type]


def test_auto_is_off_on_the_local_model_alone_and_on_with_a_remote_one() -> None:
    assert _settings().chain_on is False
    remote = ProviderConfig(kind="openai", base_url="http://x/v1", model="m")
    assert _settings(llm_providers=[remote]).chain_on is True
    assert _settings(chain_enabled=True).chain_on is True
    assert _settings(llm_providers=[remote], chain_enabled=False).chain_on is False


def test_stage_providers_by_name() -> None:
    local, big = FunctionModel.constant("a", name="local"), FunctionModel.constant("b", name="big")
    settings = _settings(chain_stage_providers={"M1": "big"})
    assert stage_providers(settings, [local, big], "OL1") == [local, big]
    assert stage_providers(settings, [local, big], "M1") == [big]
    with pytest.raises(ValueError, match="no provider named 'nope'"):
        stage_providers(_settings(chain_stage_providers={"M2": "nope"}), [local], "M2")


async def test_budgets_cap_and_native_tools_come_from_settings(tmp_path: Path) -> None:
    remote = OpenAICompatProvider(base_url="http://x/v1", model="m", name="remote")
    local = FunctionModel.constant("a", name="local")
    settings = _settings(
        chain_budget_ol1=2, chain_global_cap=5, chain_stage_providers={"M2": "local"}
    )
    runner = build_chain(
        settings=settings,
        runtime=LLMRuntime([remote, local]),
        prompts=PromptLibrary(),
        tools=build_tools(workspace=tmp_path),
    )
    await remote.aclose()
    assert [(s.node, s.budget) for s in runner.stages] == [("OL1", 2), ("M1", 3), ("M2", 2)]
    assert runner.global_cap == 5
    first = runner.stages[0].runtime.providers
    assert isinstance(first[0], NativeToolsProvider) and first[1] is local
    assert runner.stages[2].runtime.providers == (local,)
    plain = build_chain(
        settings=_settings(chain_native_tools=False),
        runtime=LLMRuntime([remote]),
        prompts=PromptLibrary(),
        tools=build_tools(workspace=tmp_path),
    )
    assert plain.stages[0].runtime.providers == (remote,)


def unreachable(name: str) -> FunctionModel:
    def refuse(_request: ProviderRequest) -> str:
        raise ProviderUnavailable(name, "connection refused")

    return FunctionModel(refuse, name=name)


async def test_a_stage_failure_opens_the_chat_runtimes_breaker(tmp_path: Path) -> None:
    remote, local = unreachable("remote"), FunctionModel.constant("Réponse.", name="local")
    recorder = MemoryRecorder()
    runtime = LLMRuntime([remote, local], recorder)
    runner = build_chain(
        settings=_settings(chain_stage_providers={"OL1": "remote", "M1": "local"}),
        runtime=runtime,
        prompts=PromptLibrary(),
        tools=build_tools(workspace=tmp_path),
    )
    result = await runner.run("Pourquoi le ciel est-il bleu ?", context())
    assert [b.state for b in runtime.breakers()] == ["open", "closed"]
    assert result.stages[0].status == "offline" and result.reply == "Réponse."
    # M2 (every provider) went straight to the fallback: the stage saw the breaker OL1 opened.
    assert len(remote.requests) == 1
    assert [(r.purpose, r.provider, r.outcome) for r in recorder.records] == [
        ("chain.OL1", "remote", "error"),
        ("chain.M1", "local", "ok"),
        ("chain.M2", "local", "fallback"),
    ]


async def test_the_only_provider_down_in_a_stage_is_down_for_everyone(tmp_path: Path) -> None:
    only = unreachable("remote")
    runtime = LLMRuntime([only])
    runner = build_chain(
        settings=_settings(), runtime=runtime, prompts=PromptLibrary(), tools=build_tools()
    )
    result = await runner.run("q", context())
    assert not runtime.any_available
    assert [s.status for s in result.stages] == ["offline", "offline", "offline"]
    # The only provider refusing a connection is asked again (one error must not silence it,
    # issue #32) until EKO_LLM_BREAKER_FAILURES (3) refusals in a row open its circuit.
    assert len(only.requests) == 3


def test_a_stage_can_only_use_the_runtimes_providers() -> None:
    runtime = LLMRuntime([FunctionModel.constant("a", name="local")])
    with pytest.raises(ValueError, match="not one of this runtime's"):
        runtime.subset([FunctionModel.constant("b", name="local")])


def test_classifier_settings() -> None:
    rules = complexity_rules(
        _settings(
            chain_short_chars=3, chain_extra_keywords=["résume"], chain_extra_categories=["maths"]
        )
    )
    assert classify("Résume ça", rules=rules).rule == "keyword:résume"
    assert classify("Analyse", rules=rules).rule == "keyword:analyse"
    assert classify("1+1", "maths", rules=rules).mode == "reflexive"
    assert classify("Bonjour, comment vas-tu ?", rules=rules).rule == "default"
