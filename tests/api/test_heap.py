"""A server process keeps what it made while starting out of the collector's passes."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

from eko.api.app import create_app
from eko.config import Settings
from eko.wiring import build_services


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def _settings(tmp_path: Path) -> Settings:
    return Settings(
        _env_file=None,
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'eko.db'}",
        jobs_worker_in_process=False,
        local_warm_up=False,
    )


async def test_a_server_freezes_its_startup_objects_and_thaws_them_on_shutdown(
    tmp_path: Path,
) -> None:
    assert gc.get_freeze_count() == 0
    app = create_app(_settings(tmp_path))  # its own services, as `eko serve` builds it
    async with app.router.lifespan_context(app):
        frozen = gc.get_freeze_count()
        # What requests make is still collected: a cycle made now is freed.
        later = _Cycle()
        gone = weakref.ref(later)
        del later
        gc.collect()
        assert gone() is None and gc.isenabled()
    # The app's modules, services and settings: tens of thousands of objects, not a handful.
    assert frozen > 10_000
    assert gc.get_freeze_count() == 0  # thawed: a process building apps can collect the old


async def test_an_app_given_its_services_freezes_nothing(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    services = build_services(settings)
    app = create_app(settings, services=services)
    try:
        async with app.router.lifespan_context(app):
            assert gc.get_freeze_count() == 0
    finally:
        await services.aclose()
