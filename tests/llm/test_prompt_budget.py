"""Fitting a prompt into a provider's budget: oldest turns first, then the middle of the
longest message; instructions never cut; what was cut is reported."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from eko.llm.errors import PromptTooLong
from eko.llm.prompt_budget import PromptDoesNotFit, approx_prompt_tokens, fit_messages
from eko.llm.providers.local import LocalLlamaProvider
from eko.llm.types import ChatMessage, ProviderRequest

from .fake_llama import CHATML, FakeLlama, Loader


def chars(messages: Sequence[ChatMessage]) -> int:
    """One token per character, like the fake llama's tokenizer."""
    return sum(len(m.content) for m in messages)


SYSTEM = ChatMessage("system", "S" * 100)


def test_messages_that_fit_are_returned_unchanged() -> None:
    messages = (SYSTEM, ChatMessage("user", "hello"))
    kept, cut = fit_messages(messages, count_tokens=chars, budget_tokens=200)
    assert kept == messages and cut is None


def test_oldest_turns_go_first_and_the_last_message_stays_whole() -> None:
    messages = (
        SYSTEM,
        ChatMessage("user", "old question " * 5),
        ChatMessage("assistant", "old answer " * 5),
        ChatMessage("user", "the question now"),
    )
    kept, cut = fit_messages(messages, count_tokens=chars, budget_tokens=180)
    assert kept[0] == SYSTEM and kept[-1] == messages[-1]
    assert messages[1] not in kept  # the oldest went first
    assert cut is not None and cut.dropped_messages >= 1 and cut.cut_chars == 0
    assert cut.kept_tokens == chars(kept) <= 180 < cut.original_tokens


def test_a_long_message_keeps_its_start_and_end_around_a_marker() -> None:
    long = "START " + "blah " * 2000 + " QUESTION END?"
    kept, cut = fit_messages(
        (SYSTEM, ChatMessage("user", long)), count_tokens=chars, budget_tokens=800
    )
    text = kept[-1].content
    assert text.startswith("START ") and text.endswith("QUESTION END?")
    assert "characters cut to fit" in text
    assert cut is not None and cut.cut_chars > 9000
    # Close to the budget, not far under it: the binary search keeps what fits.
    assert 760 <= cut.kept_tokens <= 800
    assert kept[0] == SYSTEM


def test_past_the_message_floor_the_end_of_the_instructions_goes() -> None:
    system = ChatMessage("system", "RULES " * 30 + "CONTEXT " * 100)
    message = ChatMessage("user", "Where is it? " + "detail " * 200)
    kept, cut = fit_messages((system, message), count_tokens=chars, budget_tokens=1200)
    assert cut is not None and cut.kept_tokens <= 1200
    assert kept[0].content.startswith("RULES " * 30)  # the instructions stay
    assert "CONTEXT" in system.content and len(kept[0].content) < len(system.content)
    assert len(kept[1].content) >= 600  # the message keeps at least its floor
    assert kept[1].content.startswith("Where is it?")
    # The context's cut is reported apart: what memory selected and the reader did not read.
    cut_from_system = len(system.content) - len(kept[0].content.split("\n[…")[0])
    assert cut.context_cut_chars == cut_from_system > 0
    assert cut.as_meta()["context_cut_chars"] == cut_from_system


def test_instructions_alone_over_budget_do_not_fit() -> None:
    with pytest.raises(PromptDoesNotFit):
        fit_messages((SYSTEM, ChatMessage("user", "hi")), count_tokens=chars, budget_tokens=50)


async def test_local_provider_cuts_to_its_budget_and_reports_it(tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    llama = FakeLlama(chat_template=CHATML)
    provider = LocalLlamaProvider(
        gguf, n_ctx=4096, n_threads=1, loader=Loader(llama), max_prompt_tokens=300
    )
    long = "Bonjour, voici mon texte. " + "x" * 5000 + " Que penses-tu ?"
    request = ProviderRequest(
        messages=(ChatMessage("system", "You are Eko."), ChatMessage("user", long)),
        max_tokens=40,
    )
    response = await provider.generate(request)
    prompt, _ = llama.calls[0]
    assert isinstance(prompt, list) and len(prompt) <= 300
    assert response.input_cut is not None
    assert response.input_cut.budget_tokens == 300
    assert response.input_cut.original_tokens > 5000
    short = ProviderRequest(messages=(ChatMessage("user", "Salut"),), max_tokens=40)
    assert (await provider.generate(short)).input_cut is None
    # The answer's tokens share the window: a small context caps the budget below the setting.
    small = LocalLlamaProvider(
        gguf, n_ctx=200, n_threads=1, loader=Loader(FakeLlama(chat_template=CHATML))
    )
    huge_system = ProviderRequest(messages=(ChatMessage("system", "y" * 400),), max_tokens=40)
    with pytest.raises(PromptTooLong):
        await small.generate(huge_system)
    await provider.aclose()
    await small.aclose()


async def test_the_cut_reaches_the_reply_metadata() -> None:
    from eko.chat.reply import provenance
    from eko.llm.prompt_budget import InputCut
    from eko.llm.providers import FunctionModel
    from eko.llm.recording import MemoryRecorder
    from eko.llm.runtime import LLMRuntime
    from eko.llm.types import ProviderResponse, Usage

    cut = InputCut(1280, 2900, 1270, 0, 6100)
    model = FunctionModel(
        lambda request: ProviderResponse("Réponse.", Usage(1270, 3), "f", input_cut=cut)
    )
    completion = await LLMRuntime([model], MemoryRecorder()).complete(
        [ChatMessage("user", "long")], purpose="writer"
    )
    assert completion.input_cut == cut
    assert provenance(completion)["input_cut"] == {
        "budget_tokens": 1280,
        "original_tokens": 2900,
        "kept_tokens": 1270,
        "dropped_messages": 0,
        "cut_chars": 6100,
    }


async def test_fit_prompt_gives_what_a_generation_reads_without_generating(
    tmp_path: Path,
) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    llama = FakeLlama(chat_template=CHATML)
    provider = LocalLlamaProvider(
        gguf, n_ctx=4096, n_threads=1, loader=Loader(llama), max_prompt_tokens=500
    )
    messages = (
        ChatMessage("system", "You are Eko. Memory: " + "m" * 600),
        ChatMessage("user", "Que penses-tu ?"),
    )
    fitted, cut = await provider.fit_prompt(messages, max_tokens=40)
    assert llama.calls == []  # nothing generated
    assert cut is not None and cut.kept_tokens <= 500 < cut.original_tokens
    assert fitted[0].content.startswith("You are Eko.") and "characters cut" in fitted[0].content
    # A generation reads exactly these messages.
    response = await provider.generate(ProviderRequest(messages=messages, max_tokens=40))
    assert response.input_cut == cut
    prompt, _ = llama.calls[0]
    assert len(prompt) == cut.kept_tokens
    assert fitted[0].content in llama.text_of(prompt)
    short = (ChatMessage("user", "Salut"),)
    assert await provider.fit_prompt(short, max_tokens=40) == (short, None)
    await provider.aclose()


def test_the_approximate_count_is_what_the_writer_sizes_memory_by() -> None:
    messages = [ChatMessage("system", "s" * 276), ChatMessage("user", "u" * 6)]
    # (276 + 24) / 3 = 100, (6 + 24) / 3 = 10
    assert approx_prompt_tokens(messages) == 110
    assert approx_prompt_tokens([ChatMessage("user", "u")]) == 9  # rounded up
