"""The response writer's model call, streamed into the request's live reply when there is one.

The display hides internal flags (eko/chat/engine/flags.py) while they are being written: the
stored answer is still cleaned whole by the writer's answer-only lock.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

import structlog

from eko.chat.engine.flags import strip_flags
from eko.chat.streaming import current_live
from eko.llm.runtime import LLMRuntime
from eko.llm.stream_text import StablePrefix
from eko.llm.streaming import StreamInterrupted
from eko.llm.types import ChatMessage, Completion

log = structlog.get_logger("eko.chat")

# A flag being written at the end ("[aha_mom", "onboarding_abort = tr"): held back until known.
_FLAG_TAIL = re.compile(
    r"[\[\(\{<`*\"']*[ \t]*\b(?:aha|onboarding)[\w \t:=\"'`\]\)\}>*-]*$", re.IGNORECASE
)
_LAST_WORD = re.compile(r"[\[\(\{<`*\"']*\b(\w+)$")
_FLAG_NAMES = ("aha_moment", "onboarding_abort")


async def write_streamed(
    runtime: LLMRuntime,
    messages: Sequence[ChatMessage],
    *,
    purpose: str,
    room_id: str | None,
    message_id: str | None,
    quotable: Sequence[str] = (),
) -> Completion[Any]:
    """The writer's model call: streamed into the live reply when there is one, else whole.
    `quotable`: lines of the system prompt the answer may repeat (ProviderRequest.quotable)."""
    live = current_live()
    if live is None or live.target is not live or live.user_message_id != message_id:
        return await runtime.complete(
            messages, purpose=purpose, room_id=room_id, message_id=message_id, quotable=quotable
        )
    if live.stopped:
        return live.partial_completion()
    display = StablePrefix(lambda raw: strip_flags(raw)[0], flag_tail)
    task = asyncio.create_task(
        runtime.stream(
            messages,
            on_delta=lambda delta: live.delta(display.feed(delta)),
            on_begin=live.began,
            purpose=purpose,
            room_id=room_id,
            message_id=message_id,
            quotable=quotable,
        ),
        name=f"writer.stream:{message_id}",
    )
    live.generation = task
    try:
        completion = await task
        live.generated = True
        return completion
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if live.stopped and (current is None or current.cancelling() == 0):
            log.info("chat.stream.stopped", message_id=message_id, chars=len(live.text))
            return live.partial_completion()
        task.cancel()
        raise
    except StreamInterrupted as exc:
        log.warning("chat.stream.interrupted", message_id=message_id, error=exc.error[:200])
        live.interrupted = exc.error
        return live.partial_completion(exc.attempts)
    finally:
        live.generation = None


def flag_tail(raw: str) -> int:
    """How much of a writer's raw text may still turn out to be an internal flag."""
    match = _FLAG_TAIL.search(raw)
    if match is not None:
        return len(raw) - match.start()
    word = _LAST_WORD.search(raw)
    if word is not None and any(name.startswith(word.group(1).lower()) for name in _FLAG_NAMES):
        return len(raw) - word.start()
    return 0
