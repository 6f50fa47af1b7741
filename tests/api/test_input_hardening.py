"""Issue 9, "no 500 on any input": the hand cases behind the schema fuzzing, one by one."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from sqlalchemy import func, select

from eko.api.problems import problem_response
from eko.cli import chat as chat_cli
from eko.cli.common import console
from eko.cli.terminal_text import printable
from eko.store import rooms as room_repo
from eko.store import users as user_repo
from eko.store.db import Database
from eko.store.models import Message, Room
from tests.api.conftest import HarnessFactory

PROBLEM = "application/problem+json"
TOO_BIG = [2**53, 2**63, 2**64, 10**30]


async def _count(h: Any, model: type) -> int:
    async with h.services.database.session() as session:
        return int((await session.execute(select(func.count()).select_from(model))).scalar_one())


def _assert_problem(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    body: dict[str, Any] = response.json()
    assert body["status"] == status and body["type"].startswith("urn:eko:problem:")
    return body


# --- integer overflow in query parameters ---


@pytest.mark.parametrize("value", TOO_BIG)
async def test_huge_integers_in_query_parameters_are_422(
    make_harness: HarnessFactory, value: int
) -> None:
    async with make_harness() as h:
        _, headers = await h.user()
        _, staff = await h.user("root", role="staff")
        room_id = await h.direct_room(headers)
        for path, who in [
            (f"/v1/rooms/{room_id}/messages?after={value}", headers),
            (f"/v1/rooms/{room_id}/messages?before={value}", headers),
            (f"/v1/rooms/{room_id}/messages?limit={value}", headers),
            (f"/v1/rooms/{room_id}/llm-calls?limit={value}", headers),
            (f"/v1/memory/items?offset={value}", headers),
            (f"/v1/rooms/{room_id}/summaries?offset={value}", headers),
            (f"/v1/rooms/{room_id}/summaries?level={value}", headers),
            (f"/v1/staff/memory?offset={value}", staff),
        ]:
            _assert_problem(await h.client.get(path, headers=who), 422)


async def test_the_largest_accepted_cursor_is_an_empty_page(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        _, headers = await h.user()
        room_id = await h.direct_room(headers)
        await h.client.post(f"/v1/rooms/{room_id}/messages", json={"content": "x"}, headers=headers)
        response = await h.client.get(
            f"/v1/rooms/{room_id}/messages?after={2**53 - 1}", headers=headers
        )
        assert response.status_code == 200, response.text
        assert response.json()["items"] == []
        offset = await h.client.get(f"/v1/memory/items?offset={2**53 - 1}", headers=headers)
        assert offset.status_code == 200 and offset.json() == []


# --- characters that cannot be stored ---


def _raw_json(text: str) -> dict[str, Any]:
    """A request body exactly as written: `json=` could not carry a lone surrogate."""
    return {"content": text.encode(), "headers": {"content-type": "application/json"}}


@pytest.mark.parametrize("escape", ["\\ud800", "\\udfff", "a\\udc00b", "\\u0000", "x\\u0000y"])
async def test_surrogates_and_nul_in_a_message_are_422_and_store_nothing(
    make_harness: HarnessFactory, escape: str
) -> None:
    async with make_harness() as h:
        _, headers = await h.user()
        room_id = await h.direct_room(headers)
        response = await h.client.post(
            f"/v1/rooms/{room_id}/messages",
            content=('{"content": "' + escape + '"}').encode(),
            headers={**headers, "content-type": "application/json"},
        )
        body = _assert_problem(response, 422)
        assert body["type"] == "urn:eko:problem:validation-error"
        assert body["errors"][0]["loc"] == ["body", "content"]
        assert await _count(h, Message) == 0


async def test_a_surrogate_in_a_field_name_is_422_and_stores_nothing(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness() as h:
        _, headers = await h.user()
        response = await h.client.post(
            "/v1/rooms",
            content=b'{"kind": "direct", "\\ud800": 1}',
            headers={**headers, "content-type": "application/json"},
        )
        _assert_problem(response, 422)
        assert await _count(h, Room) == 0


def test_a_problem_quoting_a_surrogate_can_still_be_sent() -> None:
    response = problem_response(422, "validation-error", "Bad", errors=[{"loc": ["\ud800"]}])
    assert json.loads(bytes(response.body).decode("utf-8"))["errors"] == [{"loc": ["\ufffd"]}]


# (method, path, caller, body): BAD stands for the refused character, PUBLIC_ID for the member's.
TEXT_FIELDS = [
    ("POST", "/v1/rooms", "member", '{"name": "rBAD"}'),
    ("POST", "/v1/memory/items", "member", '{"kind": "fact", "content": "BAD"}'),
    ("PUT", "/v1/users/PUBLIC_ID/facts/city", "member", '{"value": "BAD"}'),
    ("PUT", "/v1/users/PUBLIC_ID/facts/city", "member", '{"value": {"BAD": 1}}'),
    ("PUT", "/v1/users/PUBLIC_ID/facts/city", "member", '{"value": [["BAD"]]}'),
    ("POST", "/v1/staff/memory", "staff", '{"question": "q", "answer": "BAD"}'),
    ("POST", "/v1/staff/memory", "staff", '{"question": "q", "answer": "a", "tags": ["BAD"]}'),
    ("POST", "/v1/staff/memory/search", "staff", '{"question": "BAD"}'),
    ("POST", "/v1/docs/scopes/faq/documents", "staff", '{"source": "s", "text": "BAD"}'),
    ("POST", "/v1/chat/message", "member", '{"conversation_id": "BAD", "user_message_id": "m"}'),
    ("POST", "/v1/users", "staff", '{"display_name": "BAD"}'),
]


@pytest.mark.parametrize("bad", ["\\u0000", "\\ud83d"])  # NUL; half an emoji, alone
async def test_nul_and_surrogates_are_refused_in_every_kind_of_text_field(
    make_harness: HarnessFactory, bad: str
) -> None:
    async with make_harness() as h:
        public_id, member = await h.user()
        _, staff = await h.user("root", role="staff")
        callers = {"member": member, "staff": staff}
        for method, path, caller, body in TEXT_FIELDS:
            response = await h.client.request(
                method,
                path.replace("PUBLIC_ID", public_id),
                content=body.replace("BAD", bad).encode(),
                headers={**callers[caller], "content-type": "application/json"},
            )
            _assert_problem(response, 422)
        assert await _count(h, Room) == 0
        assert await _count(h, Message) == 0


@pytest.mark.parametrize(
    "value",
    ["NaN", "Infinity", "-Infinity", '{"a": [NaN]}', "[" * 40 + "1" + "]" * 40],
)
async def test_fact_values_a_json_column_cannot_hold_are_422(
    make_harness: HarnessFactory, value: str
) -> None:
    async with make_harness() as h:
        public_id, headers = await h.user()
        response = await h.client.put(
            f"/v1/users/{public_id}/facts/city",
            content=('{"value": ' + value + "}").encode(),
            headers={**headers, "content-type": "application/json"},
        )
        _assert_problem(response, 422)
        ok = await h.client.put(
            f"/v1/users/{public_id}/facts/city",
            json={"value": {"nested": [[["deep enough"]]], "n": 1.5}},
            headers=headers,
        )
        assert ok.status_code == 200, ok.text


@pytest.mark.parametrize(
    "path",
    [
        "/v1/memory/items/search?q=a%00b",
        "/v1/memory/items?scope=%00",
        "/v1/rooms/ab%00cd",
        "/v1/rooms/ab%00cd/messages",
        "/v1/staff/memory/%00",
        "/v1/docs/search?q=x&scope=a%00",
    ],
)
async def test_nul_anywhere_in_the_url_is_422(make_harness: HarnessFactory, path: str) -> None:
    async with make_harness() as h:
        _, headers = await h.user("root", role="staff")
        _assert_problem(await h.client.get(path, headers=headers), 422)


async def test_other_control_characters_are_stored_as_sent(make_harness: HarnessFactory) -> None:
    """ANSI escapes and bidi overrides are text like any other: kept as is, neutralised only
    where a terminal prints them."""
    content = "\x1b[31mrouge\x1b[0m \u202eevil\u202c\ttab"
    async with make_harness() as h:
        _, headers = await h.user()
        room_id = await h.direct_room(headers)
        response = await h.client.post(
            f"/v1/rooms/{room_id}/messages", json={"content": content}, headers=headers
        )
        assert response.status_code == 201, response.text
        assert response.json()["user_message"]["content"] == content


# --- timestamps ---

RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")


async def test_api_timestamps_carry_an_offset(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        _, headers = await h.user()
        room_id = await h.direct_room(headers)
        exchange = await h.client.post(
            f"/v1/rooms/{room_id}/messages", json={"content": "Salut"}, headers=headers
        )
        room = await h.client.get(f"/v1/rooms/{room_id}", headers=headers)
        calls = await h.client.get(f"/v1/rooms/{room_id}/llm-calls", headers=headers)
    stamps = [
        room.json()["created_at"],
        exchange.json()["user_message"]["created_at"],
        exchange.json()["assistant_message"]["created_at"],
        *(call["created_at"] for call in calls.json()),
    ]
    for stamp in stamps:
        assert RFC3339.match(stamp), stamp
        assert datetime.fromisoformat(stamp).utcoffset() == timedelta(0)


async def test_stored_timestamps_read_back_aware_and_utc(database: Database) -> None:
    paris = timezone(timedelta(hours=2))
    async with database.session() as session:
        user, _ = await user_repo.create_user(session, display_name="tz")
        room = await room_repo.create_room(
            session, kind="direct", name="r", persona="eko", created_by=user.id
        )
        room.created_at = datetime(2026, 6, 1, 14, 30, tzinfo=paris)
        naive = await room_repo.create_room(
            session, kind="direct", name="n", persona="eko", created_by=user.id
        )
        naive.created_at = datetime(2026, 6, 1, 12, 0)  # naive input is taken as UTC
        ids = room.id, naive.id
    async with database.session() as session:
        stored = await room_repo.get_room(session, room_id=ids[0])
        stored_naive = await room_repo.get_room(session, room_id=ids[1])
        assert stored is not None and stored_naive is not None
        assert stored.created_at == datetime(2026, 6, 1, 12, 30, tzinfo=UTC)
        assert stored.created_at.tzinfo is UTC
        assert stored_naive.created_at == datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
        # Comparisons in SQL agree with the stored instant.
        later = await session.execute(
            select(func.count())
            .select_from(Room)
            .where(Room.created_at > datetime(2026, 6, 1, 14, 0, tzinfo=paris))
        )
        assert later.scalar_one() == 1


# --- browser security headers ---


async def test_a_malformed_body_is_a_documented_problem(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        _, headers = await h.user()
        response = await h.client.post(
            "/v1/rooms",
            content=b'{"kind": "direct", "name": ' + b"1" * 5000 + b"}",
            headers={**headers, "content-type": "application/json"},
        )
    _assert_problem(response, 400)  # a number too long for Python's int parser


def test_printable_neutralises_terminal_controls() -> None:
    assert printable("\x1b[2J\x1b]0;owned\x07") == "\\x1b[2J\\x1b]0;owned\\x07"
    assert printable("abc\u202edef\u2066x\u2069") == "abc\\u202edef\\u2066x\\u2069"
    assert printable("\r\x00\x7f\x9b") == "\\x0d\\x00\\x7f\\x9b"
    text = "Bonjour 👋\n\tà toi — «ok» 日本"
    assert printable(text) == text


async def test_eko_chat_prints_replies_with_controls_neutralised(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Scripted:
        room_id = "room"

        async def send(self, text: str, on_delta: Any) -> dict[str, Any]:
            return {"content": "\x1b[2Jcleared \u202eevil", "metadata": {"provider": "p\x1b[0m"}}

        async def close(self) -> None:
            return None

    lines = iter(["hello"])

    def fake_input(*_: Any) -> str:
        try:
            return next(lines)
        except StopIteration:
            raise EOFError from None

    monkeypatch.setattr("builtins.input", fake_input)
    monkeypatch.setattr(chat_cli.sys.stdin, "isatty", lambda: False, raising=False)
    with console.capture() as captured:
        await chat_cli._loop(Scripted(), details=True)  # the provider line: --details
    out = captured.get()
    assert "\x1b" not in out  # not a terminal under pytest: rich adds no styling of its own
    assert "\\x1b[2Jcleared \\u202eevil" in out
    assert "\u202e" not in out
    assert "p\\x1b[0m" in out


@pytest.mark.parametrize("user_id", ["dæ", "a b", "x/y", "a\nb"])
async def test_a_malformed_user_id_in_a_cache_request_is_422_not_500(
    make_harness: HarnessFactory, user_id: str
) -> None:
    # Found by the schemathesis run: a non-ASCII id reached the scope check and raised.
    async with make_harness() as h:
        _, staff = await h.user("root", role="staff")
        for path, body in (
            ("/v1/staff/memory/search", {"question": "q", "user_public_id": user_id}),
            ("/v1/staff/memory", {"question": "q", "answer": "a", "user_public_id": user_id}),
        ):
            response = await h.client.post(path, json=body, headers=staff)
            assert response.status_code == 422, (path, response.text)


@pytest.mark.parametrize(
    "body",
    [
        '{"model": "eko", "messages": [{"role": "user", "content": "a\\u0000b"}]}',
        '{"model": "eko", "messages": [{"role": "user", "content": "\\ud800"}]}',
        '{"model": "eko", "messages": [{"role": "user", "content": '
        '[{"type": "text", "text": "x\\udfffy"}]}]}',
        '{"model": "eko", "messages": [{"role": "user", "content": "Hi", "name": "\\u0000"}]}',
        '{"model": "eko\\u0000", "messages": [{"role": "user", "content": "Hi"}]}',
        '{"model": "eko", "user": "\\ud83d", "messages": [{"role": "user", "content": "Hi"}]}',
    ],
)
async def test_the_openai_route_refuses_unstorable_text_and_stores_nothing(
    make_harness: HarnessFactory, body: str
) -> None:
    """/v1/chat/completions checks text like every other route: a 400 in OpenAI's shape, not a
    500 (PostgreSQL) or a NUL stored (SQLite)."""
    async with make_harness() as h:
        _, headers = await h.user()
        async with h.services.database.session() as session:
            before = await session.scalar(select(func.count()).select_from(Message))
        response = await h.client.post(
            "/v1/chat/completions",
            content=body.encode(),
            headers={**headers, "content-type": "application/json"},
        )
        async with h.services.database.session() as session:
            after = await session.scalar(select(func.count()).select_from(Message))
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert "not accepted" in error["message"]
    assert after == before


async def test_a_body_nested_too_deep_for_the_openai_route_is_a_400(
    make_harness: HarnessFactory,
) -> None:
    """Valid JSON nested deeper than Python's parser goes: a 400 in OpenAI's shape, as other
    routes answer it (FastAPI's body parsing), not a 500 from the RecursionError."""
    async with make_harness() as h:
        _, headers = await h.user()
        response = await h.client.post(
            "/v1/chat/completions",
            content=b"[" * 100_000 + b"]" * 100_000,
            headers={**headers, "content-type": "application/json"},
        )
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "invalid_json"
