"""GET / tells a signed-in browser to fetch its room list at once (a `Link` preload), and only
a signed-in one: a signed-out, unknown or signed-out-since cookie gets no header (the preload
would be refused with a 401, a console error in the page). On both backends."""

from __future__ import annotations

from eko.api.deps import SESSION_COOKIE
from eko.api.routers.page import ROOMS_PRELOAD
from tests.api.accounts_helpers import setup_operator
from tests.api.conftest import HarnessFactory


async def test_the_room_list_is_preloaded_for_a_signed_in_browser_only(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness() as h:
        signed_out = await h.client.get("/")
        browser = await setup_operator(h.client)
        signed_in = await h.client.get("/", headers=browser.reads)
        unknown = await h.client.get("/", headers={"Cookie": f"{SESSION_COOKIE}=not-a-session"})
        # The preloaded request is the page's own: it answers with the cookie alone.
        rooms = await h.client.get("/v1/rooms", headers=browser.reads)
        out = await h.client.post("/v1/auth/signout", headers=browser.writes)
        after = await h.client.get("/", headers=browser.reads)

    assert signed_in.status_code == 200 and "<script src=" in signed_in.text
    assert signed_in.headers["link"] == ROOMS_PRELOAD
    assert rooms.status_code == 200 and out.status_code == 204
    for response in (signed_out, unknown, after):
        assert response.status_code == 200 and "link" not in response.headers
    # The answer depends on the cookie: never served from a cache.
    for response in (signed_out, signed_in):
        assert response.headers["cache-control"] == "no-cache"
        assert response.headers["vary"] == "Cookie"
