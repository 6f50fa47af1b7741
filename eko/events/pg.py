"""The PostgreSQL bus: publish is `pg_notify` on one channel; each process that has
subscribers holds one asyncpg connection LISTENing on it and hands what arrives to its own
subscribers. So a client connected to any API worker sees what any API or job worker raised,
including its own process's events (they come back through the server, in commit order).

NOTIFY payloads are limited to 8,000 bytes: a larger event is sent without its bulky fields
(`truncated: true`; the client fetches the object by id). Events raised while the listening
connection is being re-established are lost: clients re-read state after a reconnect notice.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from typing import Any

import asyncpg
import structlog
from sqlalchemy import text
from sqlalchemy.engine import make_url

from eko.events.fanout import Fanout, Subscription
from eko.events.types import Event
from eko.store.db import Database

log = structlog.get_logger("eko.events")

CHANNEL = "eko_events"
MAX_PAYLOAD_BYTES = 7900
# Fields kept when an event is too large for one NOTIFY.
KEPT_WHEN_TRUNCATED = ("message_id", "job_id", "name", "status", "role", "room_id")


def asyncpg_dsn(database_url: str) -> str:
    url = make_url(database_url).set(drivername="postgresql")
    return url.render_as_string(hide_password=False)


def fit_payload(event: Event) -> str:
    payload = event.to_json()
    if len(payload.encode("utf-8")) <= MAX_PAYLOAD_BYTES:
        return payload
    data: dict[str, Any] = {k: v for k, v in event.data.items() if k in KEPT_WHEN_TRUNCATED}
    message = event.data.get("message")
    if isinstance(message, dict):
        data["message"] = {k: v for k, v in message.items() if k != "content"}
    data["truncated"] = True
    smaller = Event(type=event.type, room_id=event.room_id, data=data, id=event.id, at=event.at)
    return smaller.to_json()


class PgNotifyBus:
    backend = "postgres"

    def __init__(self, database: Database, *, reconnect_s: float = 1.0) -> None:
        self._database = database
        self._dsn = asyncpg_dsn(database.url)
        self._fanout = Fanout()
        self._reconnect_s = reconnect_s
        self._listener: asyncio.Task[None] | None = None
        self._listening = asyncio.Event()
        self._closing = False

    async def publish(self, event: Event) -> None:
        try:
            async with self._database.engine.connect() as connection:
                await connection.execute(
                    text("SELECT pg_notify(:channel, :payload)"),
                    {"channel": CHANNEL, "payload": fit_payload(event)},
                )
                await connection.commit()
        except Exception:
            log.exception("events.publish_failed", type=event.type)

    async def subscribe(self, *, max_queue: int) -> Subscription:
        if self._listener is None:
            self._listener = asyncio.create_task(self._listen(), name="events:listen")
        # Events published after subscribe() returns must reach this subscriber.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._listening.wait(), timeout=10)
        return self._fanout.add(max_queue)

    @property
    def subscribers(self) -> int:
        return self._fanout.subscribers

    def _on_notify(self, _connection: Any, _pid: int, _channel: str, payload: str) -> None:
        try:
            event = Event.from_json(payload)
        except (ValueError, KeyError, TypeError):
            log.warning("events.bad_payload")
            return
        self._fanout.deliver(event)

    async def _listen(self) -> None:
        while not self._closing:
            lost = asyncio.Event()
            connection: Any = None
            collected = False
            try:
                connection = await asyncpg.connect(self._dsn)
                connection.add_termination_listener(functools.partial(_set, lost))
                await connection.add_listener(CHANNEL, self._on_notify)
                self._listening.set()
                log.info("events.listening", channel=CHANNEL)
                await lost.wait()
                log.warning("events.listener_lost")
            except asyncio.CancelledError:
                raise
            except GeneratorExit:
                # Closed by the garbage collector (this task was never closed and nothing
                # refers to it any more): nothing may be awaited now. An await here would run
                # asyncpg's close under asyncio.timeout in whatever task happens to be running,
                # and that timeout would cancel that unrelated task two seconds later.
                collected = True
                raise
            except Exception:
                log.exception("events.listen_failed")
            finally:
                self._listening.clear()
                if connection is not None:
                    if collected:
                        connection.terminate()
                    else:
                        with contextlib.suppress(Exception):
                            await connection.close(timeout=2)
            if not self._closing:
                await asyncio.sleep(self._reconnect_s)

    async def aclose(self) -> None:
        self._closing = True
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._listener
            self._listener = None


def _set(event: asyncio.Event, _connection: Any) -> None:
    event.set()
