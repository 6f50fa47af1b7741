"""A burst of posts, with processes SIGKILLed at chosen moments while it runs.

Messages go round-robin to the users' direct rooms; half are streamed, half answered as JSON,
and the client id travels half the time as `client_message_id`, half as `Idempotency-Key`
(both documented idempotency keys). Every post is sent at once (behind a barrier, as in the
load bench); each kill fires at its delay after the barrier opens. Nothing is retried: the
bench measures what the server does with what it acknowledged, not what a client's retry
repairs.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from eko_bench.crash.post import Post, PostResult, send


@dataclass(frozen=True)
class Kill:
    """SIGKILL of one process `at_s` seconds into the burst."""

    target: str
    at_s: float
    action: Callable[[], None]


def burst_posts(rooms: Sequence[tuple[str, str]], *, messages: int, round_tag: str) -> list[Post]:
    """`messages` posts over `rooms` ((room id, API key) pairs), round-robin."""
    posts = []
    for i in range(messages):
        room_id, key = rooms[i % len(rooms)]
        posts.append(
            Post(
                room_id=room_id,
                api_key=key,
                content=f"Message {i} : peux-tu noter que mon rendez-vous {i} est à {i % 24} h ?",
                client_id=f"crash-{round_tag}-{i}",
                stream=i % 2 == 0,
                as_header=(i // 2) % 2 == 1,
            )
        )
    return posts


async def run_burst(
    base_url: str, posts: Sequence[Post], *, timeout_s: float, kills: Sequence[Kill] = ()
) -> tuple[list[PostResult], dict[str, float]]:
    """Every post at once, the kills at their moments; the results in the posts' order and,
    per target, when its kill actually fired (seconds into the burst)."""
    gate = asyncio.Event()
    fired: dict[str, float] = {}
    began = 0.0

    async def one(post: Post) -> PostResult:
        await gate.wait()
        return await send(base_url, post, timeout_s=timeout_s)

    async def kill(planned: Kill) -> None:
        await gate.wait()
        await asyncio.sleep(max(0.0, planned.at_s - (time.perf_counter() - began)))
        fired[planned.target] = time.perf_counter() - began
        await asyncio.to_thread(planned.action)

    tasks = [asyncio.create_task(one(post)) for post in posts]
    killers = [asyncio.create_task(kill(k)) for k in kills]
    await asyncio.sleep(0)
    began = time.perf_counter()
    gate.set()
    results = list(await asyncio.gather(*tasks))
    await asyncio.gather(*killers)  # a kill planned after the last answer still happens
    return results, fired
