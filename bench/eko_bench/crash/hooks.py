"""Which after-reply jobs a reply must get, asked of Eko's own wiring with the server's settings.

The hooks depend on the configuration (memory extraction, summaries, recall settings…), so
the bench does not keep its own list: `python -m eko_bench.crash.hooks`, run with the
server's environment, builds the services as `eko serve` does (nothing is started or loaded)
and prints the registered hooks as JSON. A reply needs the job `after_reply.<name>` of each
hook, except the memory guard's cached replies, which only get the hooks that ask for them
(eko/jobs/after_reply.py).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from eko.jobs.after_reply import CACHED_REPLY_TYPES, PREFIX


@dataclass(frozen=True)
class Hook:
    name: str
    on_cached_reply: bool

    @property
    def job_name(self) -> str:
        return f"{PREFIX}{self.name}"


def expected_jobs(hooks: tuple[Hook, ...], reply_type: str) -> set[str]:
    """The after-reply job names a reply of this type must get."""
    cached = reply_type in CACHED_REPLY_TYPES
    return {hook.job_name for hook in hooks if hook.on_cached_reply or not cached}


async def configured_hooks(env: dict[str, str], cwd: Path) -> tuple[Hook, ...]:
    """The hooks of a server started with `env`."""
    completed = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "eko_bench.crash.hooks"],
        env=env,
        cwd=cwd,
        capture_output=True,
        timeout=120,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(
            "could not list the after-reply hooks:\n"
            + completed.stderr.decode(errors="replace")[-3000:]
        )
    rows = json.loads(completed.stdout.decode().strip().splitlines()[-1])
    return tuple(Hook(str(row["name"]), bool(row["on_cached_reply"])) for row in rows)


def main() -> None:
    from eko.config import Settings
    from eko.wiring import build_services

    services = build_services(Settings())
    try:
        after_reply = services.chat.answerer.after_reply
        hooks = after_reply.hooks if after_reply is not None else []
        rows = [
            {"name": hook.name, "on_cached_reply": bool(getattr(hook, "on_cached_reply", False))}
            for hook in hooks
        ]
        print(json.dumps(rows))
    finally:
        asyncio.run(services.aclose())


if __name__ == "__main__":
    main()
