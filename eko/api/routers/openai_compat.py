"""Eko as a model: OpenAI-compatible GET /v1/models and POST /v1/chat/completions.

The personas are the models. The API key is the user's Eko key. The room is the one named by
the `X-Eko-Room` header or `metadata.eko_room`, else the conversation's own room, found by its
earlier turns (eko/api/openai_conversation.py: a new conversation gets a new room; earlier
turns Eko has not stored are imported into it first). The last message is the new input: it is
stored and answered like any message (idempotent with `Idempotency-Key`), with the room's
history, which is what the model sees. System (and developer) messages are the caller's
instructions for the conversation, kept on the room and layered under the persona and the
rules by the writer. `user` is the caller's end user, recorded with the message (`end_user`).
`response_format` (JSON) and `tools` are kept with the message and hold its reply to them
(eko/api/openai_format.py, eko/llm/caller_format.py): the reply's `tool_calls` come back with
finish_reason `tool_calls`, and the next request's `tool` messages are its new input.
`usage` counts the model calls made for the message (llm_calls): a cached or paywalled answer
spent none. When no model answered (the reply would be the canned apology) the answer is a 503
with Retry-After. Errors come in OpenAI's shape ({"error": {...}}) on these routes (those of
the middleware too: eko/api/openai_errors.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Annotated, Any

import structlog
from fastapi import APIRouter, Header, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import ValidationError

from eko.api.live_follow import follow, remainder, start_live
from eko.api.openai_auth import authenticate
from eko.api.openai_conversation import (
    Conversation,
    conversation_room,
    explicit_room,
    fingerprint,
    keep_instructions,
    split,
)
from eko.api.openai_format import caller_format_of
from eko.api.openai_reply import (
    NO_ANSWER,
    PENDING,
    completion_id,
    error_chunk,
    finish_reason,
    is_fallback,
    reply_of,
    usage_of,
)
from eko.api.schemas.openai import (
    CompletionRequest,
    OpenAIError,
    chunk_body,
    completion_body,
    model_entry,
    refused_and_ignored,
)
from eko.api.schemas.openai_docs import (
    completion_request_body,
    completion_responses,
    error_responses,
)
from eko.api.sse_reply import SSE_MEDIA_TYPE
from eko.chat.service import (
    EmptyMessage,
    Exchange,
    IdempotencyConflict,
    MessageTooLong,
    Overloaded,
)
from eko.chat.streaming import LiveReply
from eko.llm.caller_format import META_KEY as CALLER_FORMAT_KEY
from eko.llm.caller_format import CallerFormat
from eko.store import conversations as conversation_repo
from eko.store.models import Message, Room, User
from eko.wiring import Services

log = structlog.get_logger("eko.api")
router = APIRouter(tags=["openai"])
# Models are listed with the time this process started (personas have no creation date).
_STARTED = int(time.time())


def _services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


@router.get("/v1/models", responses=error_responses(401, 413, 422, 503))
async def list_models(request: Request) -> Response:
    """The personas, as OpenAI models."""
    try:
        services = _services(request)
        await authenticate(services, request)
        personas = services.prompts.personas()
        return JSONResponse(
            {"object": "list", "data": [model_entry(p, _STARTED) for p in personas]}
        )
    except OpenAIError as exc:
        return _error(exc)


@router.get("/v1/models/{model}", responses=error_responses(401, 404, 413, 422, 503))
async def get_model(model: str, request: Request) -> Response:
    try:
        services = _services(request)
        await authenticate(services, request)
        if not services.prompts.has_persona(model):
            raise _no_model(model)
        return JSONResponse(model_entry(model, _STARTED))
    except OpenAIError as exc:
        return _error(exc)


@router.post(
    "/v1/chat/completions",
    responses=completion_responses(),
    # Read by `_read`, not by FastAPI (an invalid body is a 400 in OpenAI's shape): described.
    openapi_extra=completion_request_body(),
)
async def chat_completions(
    request: Request,
    x_eko_room: Annotated[str | None, Header(description="The room to talk in")] = None,
    idempotency_key: Annotated[str | None, Header(max_length=200)] = None,
) -> Response:
    """A reply from the persona named by `model`, whole or as `chat.completion.chunk`s."""
    try:
        services = _services(request)
        user = await authenticate(services, request)
        body = await _read(request)
        ignored = refused_and_ignored(body)
        if not services.prompts.has_persona(body.model):
            raise _no_model(body.model)
        caller = caller_format_of(body)
        conversation = split(body.messages)
        text = conversation.message
        # Refused before a room is found or made for it (a refusal leaves no room behind).
        await _guarded(_checked(services, text))
        explicit = x_eko_room or (body.metadata or {}).get("eko_room")
        room = await _room(services, user, body.model, explicit, conversation, idempotency_key)
        room = await keep_instructions(services.database, room, conversation.instructions)
        meta = _message_meta(body.user, caller, conversation)
        keeper = _HeadKeeper(services, user, room, conversation)
        headers = {"X-Eko-Room": room.id}
        if ignored:
            headers["X-Eko-Ignored-Params"] = ",".join(ignored)
        chat = services.chat
        if body.stream:
            include_usage = bool(body.stream_options and body.stream_options.include_usage)
            live, post = await keeper.released_on_error(
                start_live(
                    lambda live: chat.post(
                        user=user,
                        room=room,
                        content=text,
                        client_message_id=idempotency_key,
                        live=live,
                        meta=meta,
                    ),
                    publish=services.events.publish,
                    room_id=room.id,
                )
            )
            return StreamingResponse(
                _chunks(services, live, post, body.model, keeper, include_usage=include_usage),
                media_type=SSE_MEDIA_TYPE,
                headers={**headers, "Cache-Control": "no-cache"},
            )
        exchange = await keeper.released_on_error(
            chat.post(
                user=user, room=room, content=text, client_message_id=idempotency_key, meta=meta
            )
        )
        if exchange.answer_pending:
            # Stored, so owed: wait for the recovery loop's answer rather than refuse a
            # message that is already kept (a client of this API needs the answer itself).
            late = await chat.wait_for_answer(
                exchange.user_message.id, timeout_s=services.settings.chat_message_deadline_s
            )
            exchange = replace(exchange, assistant_message=late, answer_pending=late is None)
        try:
            reply = reply_of(exchange)
        except OpenAIError:
            await keeper.release()
            raise
        await keeper.answered(reply)
        usage = await usage_of(services, exchange.user_message)
        return JSONResponse(
            completion_body(
                completion_id=completion_id(exchange.user_message),
                model=body.model,
                content=reply.content,
                finish_reason=finish_reason(reply),
                usage=usage,
                tool_calls=reply.tool_calls,
            ),
            headers=headers,
        )
    except OpenAIError as exc:
        return _error(exc)


async def _chunks(
    services: Services,
    live: LiveReply,
    post: asyncio.Task[Exchange],
    model: str,
    keeper: _HeadKeeper,
    *,
    include_usage: bool,
) -> AsyncIterator[bytes]:
    assert live.user_message is not None
    chunk_id, created = completion_id(live.user_message), int(time.time())

    def chunk(**fields: Any) -> bytes:
        body = chunk_body(completion_id=chunk_id, model=model, created=created, **fields)
        return f"data: {json.dumps(body, ensure_ascii=False)}\n\n".encode()

    yield chunk(delta={"role": "assistant", "content": ""})
    shown: list[str] = []
    answered = False
    try:
        async for item in follow(live, post):
            if isinstance(item, str):
                shown.append(item)
                yield chunk(delta={"content": item})
                continue
            if item.exchange is not None and item.exchange.answer_pending:
                yield error_chunk(PENDING, "answer_pending")
                return
            if item.exchange is None or item.exchange.assistant_message is None:
                yield error_chunk("Eko could not answer this message.", "answer_failed")
                return
            reply = item.exchange.assistant_message
            if (reply.meta or {}).get("incomplete"):
                # The openai client raises on an error in the stream: the answer broke mid-way.
                yield error_chunk(
                    "The model stopped answering mid-way; the partial reply is stored, marked "
                    "incomplete.",
                    "stream_interrupted",
                )
                return
            if is_fallback(reply):
                # The status is sent already: the error event makes the client raise.
                yield error_chunk(NO_ANSWER, "model_unavailable")
                return
            rest = remainder(reply.content, "".join(shown))
            if rest:
                yield chunk(delta={"content": rest})
            if reply.tool_calls:
                calls = [{"index": i, **call} for i, call in enumerate(reply.tool_calls)]
                yield chunk(delta={"tool_calls": calls})
            yield chunk(delta={}, finish_reason=finish_reason(reply))
            await keeper.answered(reply)
            answered = True
            if include_usage:
                yield chunk(usage=await usage_of(services, item.exchange.user_message))
        yield b"data: [DONE]\n\n"
    finally:
        if not answered:
            await keeper.release()


def _message_meta(
    end_user: str | None, caller: CallerFormat | None, conversation: Conversation
) -> dict[str, Any] | None:
    """Kept with the stored message: the caller's end user, the format its reply must have
    (whoever answers it, now or after a restart), the tool results it carries."""
    meta: dict[str, Any] = {}
    if end_user:
        meta["end_user"] = end_user
    if caller is not None:
        meta[CALLER_FORMAT_KEY] = caller.to_meta()
    if conversation.tool_results is not None:
        meta["tool_results"] = conversation.tool_results
    return meta or None


async def _checked(services: Services, text: str) -> str:
    return services.chat.validate(text)


async def _guarded(awaitable: Any) -> Any:
    """The chat service's refusals, in OpenAI's shape."""
    try:
        return await awaitable
    except MessageTooLong as exc:
        raise OpenAIError(400, str(exc), param="messages", code="message_too_long") from exc
    except EmptyMessage as exc:
        raise OpenAIError(400, str(exc), param="messages", code="empty_message") from exc
    except IdempotencyConflict as exc:
        raise OpenAIError(
            400, "This Idempotency-Key was used for a different message.", code="key_reused"
        ) from exc
    except Overloaded as exc:
        raise OpenAIError(
            429,
            str(exc),
            type="rate_limit_error",
            code="overloaded",
            headers={"Retry-After": str(exc.retry_after_s)},
        ) from exc


async def _read(request: Request) -> CompletionRequest:
    try:
        raw = await request.json()
    except (ValueError, RecursionError) as exc:  # not JSON, not UTF-8, nested too deep
        raise OpenAIError(400, "The body is not JSON.", code="invalid_json") from exc
    try:
        return CompletionRequest.model_validate(raw)
    except ValidationError as exc:
        # The error that got furthest: for a union (content as a string or a list of parts)
        # the branch that matched the shape says what is wrong, not the one that did not.
        first = max(exc.errors(), key=lambda error: len(error["loc"]))
        where = ".".join(str(part) for part in first["loc"])
        raise OpenAIError(400, f"{where}: {first['msg']}", param=where or None) from exc


async def _room(
    services: Services,
    user: User,
    persona: str,
    room_id: str | None,
    conversation: Conversation,
    idempotency_key: str | None,
) -> Room:
    """The room named explicitly, else the conversation's (eko/api/openai_conversation.py)."""
    if room_id:
        return await explicit_room(services.database, user=user, persona=persona, room_id=room_id)
    name = f"{user.display_name} & {services.settings.assistant_name} ({persona})"
    return await conversation_room(
        services.database,
        user=user,
        persona=persona,
        conversation=conversation,
        room_name=name,
        idempotency_key=idempotency_key,
    )


class _HeadKeeper:
    """Moves the room's conversation head (eko/store/conversations.py) once the reply is
    given, or gives the room back as it was when no answer is."""

    def __init__(
        self, services: Services, user: User, room: Room, conversation: Conversation
    ) -> None:
        self._services, self._user, self._room = services, user, room
        self._conversation = conversation

    async def released_on_error(self, awaitable: Any) -> Any:
        """`_guarded(awaitable)`, the room given back when it raises."""
        try:
            return await _guarded(awaitable)
        except BaseException:
            await self.release()
            raise

    async def answered(self, reply: Message) -> None:
        await self._set(self._conversation.head_after(reply.content, reply.tool_calls or ()))

    async def release(self) -> None:
        with contextlib.suppress(Exception):  # best effort: else the next request forks
            await self._set(fingerprint(self._conversation.earlier))

    async def _set(self, head: str) -> None:
        await conversation_repo.set_head(
            self._services.database,
            room_id=self._room.id,
            user_id=self._user.id,
            persona=self._room.persona,
            fingerprint=head,
        )


def _no_model(model: str) -> OpenAIError:
    return OpenAIError(
        404,
        f"The model {model!r} does not exist: GET /v1/models lists Eko's personas.",
        param="model",
        code="model_not_found",
    )


def _error(exc: OpenAIError) -> JSONResponse:
    return JSONResponse(exc.body, status_code=exc.status, headers=exc.headers)
