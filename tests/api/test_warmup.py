"""Warm-up primes the heads every orchestrator and writer prompt really starts with."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from eko.chat.engine.warmup import stable_prefixes, warm_up
from eko.llm.providers import FunctionModel
from eko.llm.providers.local import LocalLlamaProvider
from eko.llm.types import ChatMessage
from tests.api.conftest import HarnessFactory

from ..llm.fake_llama import CHATML, FakeLlama, Loader

ROUTE = (
    '{"confidence": 0.9, "decision": "route", "notes": "", "payload": {"intent": '
    '"general_question", "context_level": "light", "need_web": false, "web_search_prompt": "", '
    '"scope_need": false, "scopes_selected": []}}'
)


async def test_the_primed_heads_are_prefixes_of_the_real_prompts(
    make_harness: HarnessFactory,
) -> None:
    model = FunctionModel(lambda request: ROUTE if request.json_schema else "Canberra.")
    async with make_harness(providers=[model]) as h:
        _, headers = await h.user()
        room_id = await h.direct_room(headers)
        response = await h.client.post(
            f"/v1/rooms/{room_id}/messages",
            json={"content": "Quelle est la capitale de l'Australie ?"},
            headers=headers,
        )
        assert response.status_code == 201, response.text
        orchestrator, writer = stable_prefixes(
            h.services.prompts, h.services.engine.nodes, persona=h.settings.default_persona
        )
    sent = {("json" if r.json_schema else "text"): r.messages[0].content for r in model.requests}
    assert sent["json"].startswith(orchestrator[0].content)
    assert sent["text"].startswith(writer[0].content)
    # Long enough to matter: most of each instruction block is shared.
    assert len(orchestrator[0].content) > 0.6 * len(sent["json"])
    assert len(writer[0].content) > 0.5 * len(sent["text"])


class Recording:
    name = "recording"

    def __init__(self, fail: bool = False) -> None:
        self.primed: list[Sequence[ChatMessage]] = []
        self.fail = fail

    async def prime(self, messages: Sequence[ChatMessage]) -> bool:
        if self.fail:
            raise RuntimeError("model file missing")
        self.primed.append(messages)
        return True


async def test_warm_up_primes_what_can_be_primed_and_never_raises() -> None:
    prefixes = [[ChatMessage("system", "A")], [ChatMessage("system", "B")]]
    plain = FunctionModel(lambda request: "x")
    recording, broken = Recording(), Recording(fail=True)
    assert await warm_up([plain, broken, recording], prefixes) == 2  # type: ignore[list-item]
    assert recording.primed == prefixes
    assert plain.requests == []


async def test_local_prime_reads_the_prompt_only_with_a_prompt_cache(tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    messages = [ChatMessage("system", "You are Eko.")]
    without = LocalLlamaProvider(gguf, loader=Loader(FakeLlama(chat_template=CHATML)))
    assert await without.prime(messages) is False
    llama = FakeLlama(chat_template=CHATML)
    with_cache = LocalLlamaProvider(gguf, loader=Loader(llama), prompt_cache_bytes=64 * 1024 * 1024)
    assert await with_cache.prime(messages) is True
    _, options = llama.calls[0]
    assert options["max_tokens"] == 1
    await with_cache.aclose()
    await without.aclose()
