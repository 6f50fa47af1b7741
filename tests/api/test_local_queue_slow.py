"""The bundled model's line through a real server: a second person posting while the first is
answered is told their place, and gets a real answer, not the apology."""

from __future__ import annotations

from pathlib import Path

import pytest

from eko.llm.providers import LocalLlamaProvider
from tests.llama_threads import llama_threads
from tests.llm.test_llm_slow import default_gguf  # noqa: F401

from .live_server import running_eko
from .test_local_queue_live import Poster, new_room, wait_for

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("backend", ["sqlite"])
def test_two_people_at_once_on_the_bundled_model(
    database_url: str,
    default_gguf: Path,  # noqa: F811
) -> None:
    local = LocalLlamaProvider(
        default_gguf, name="local", n_ctx=2048, max_prompt_tokens=1280, n_threads=llama_threads()
    )
    # Generous limits for the calls themselves: on a shared 2-core machine one generation can
    # take minutes; what is tested is the wait in line, which never counts against them.
    with running_eko(
        database_url,
        [local],
        llm_max_tokens=32,
        chat_message_deadline_s=900,
        chat_writer_timeout_s=900,
        orchestrator_timeout_s=300,
    ) as eko:
        rooms = [new_room(eko), new_room(eko)]
        first = Poster(eko, rooms[0], "Quelle est la capitale de l'Italie ?", timeout_s=1200)
        first.start()
        wait_for(lambda: local.gate.held, timeout_s=120)
        second = Poster(eko, rooms[1], "What is the capital of Japan?", timeout_s=1200)
        second.start()
        first.join(1200)
        second.join(1200)

        assert second.places() and max(second.places()) >= 1, second.seen
        assert second.places()[-1] == 0
        for poster in (first, second):
            done = poster.done()
            assert done["source"] == "model", done
            assert done["message"]["content"].strip()
            assert not done["message"]["metadata"].get("fallback"), done
