"""`eko users create|list|set-pro|unset-pro`, and the quick start's first user end to end."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from eko.cli import app
from eko.store import users as user_repo
from eko.store import web_sessions as session_repo
from eko.store.db import Database
from tests.conftest import run_isolated

runner = CliRunner()


def _create(*args: str) -> tuple[str, str]:
    """Runs `eko users create …`; returns (output, API key)."""
    result = runner.invoke(app, ["users", "create", *args])
    assert result.exit_code == 0, result.output
    return result.output, result.output.strip().splitlines()[-1]


def _user(database_url: str, name: str) -> Any:
    """The user as stored, read on a private loop (the CLI runs its own with asyncio.run)."""

    async def read() -> Any:
        database = Database(database_url)
        try:
            async with database.session() as session:
                user = await user_repo.get_by_name(session, display_name=name)
                assert user is not None
                return user
        finally:
            await database.dispose()

    return run_isolated(read())


def test_the_first_user_is_staff_and_pro_and_later_ones_are_members(cli_env: str) -> None:
    first_output, _ = _create("Camille")
    assert "first user" in first_output and "staff" in first_output
    second_output, _ = _create("Dominique")
    assert "first user" not in second_output
    third_output, _ = _create("Eve", "--pro")
    assert "first user" not in third_output

    camille, dominique, eve = [_user(cli_env, n) for n in ("Camille", "Dominique", "Eve")]
    assert (camille.role, camille.is_pro) == ("staff", True)
    assert (dominique.role, dominique.is_pro) == ("member", False)
    assert (eve.role, eve.is_pro) == ("member", True)


def test_list_shows_role_pro_quota_and_public_id(cli_env: str) -> None:
    _create("Camille")
    _create("Dominique")
    listed = runner.invoke(app, ["users", "list"])
    assert listed.exit_code == 0, listed.output
    dominique = _user(cli_env, "Dominique")
    row = next(line for line in listed.output.splitlines() if "Dominique" in line)
    assert dominique.public_id in row
    assert re.search(r"member\s*│\s*no\s*│\s*0 / 8", row), row
    camille_row = next(line for line in listed.output.splitlines() if "Camille" in line)
    assert re.search(r"staff\s*│\s*yes", camille_row), camille_row


def test_list_shows_unlimited_for_a_pro_user(cli_env: str) -> None:
    """Issue #37: the operator (pro, never paywalled) was listed with "0 / 8" free messages."""
    _create("Camille")
    _create("Dominique")
    _create("Eve", "--pro")
    listed = runner.invoke(app, ["users", "list"], env={"COLUMNS": "200"})
    rows = {n: next(ln for ln in listed.output.splitlines() if n in ln) for n in ("Camille", "Eve")}
    for name, row in rows.items():
        assert re.search(r"yes\s*│\s*unlimited\s*│", row), (name, row)
        assert "/ 8" not in row
    dominique = next(line for line in listed.output.splitlines() if "Dominique" in line)
    assert re.search(r"no\s*│\s*0 / 8", dominique), dominique


def test_set_pro_and_unset_pro_by_name_or_public_id(cli_env: str) -> None:
    _create("Camille")
    _create("Dominique")
    dominique = _user(cli_env, "Dominique")

    made = runner.invoke(app, ["users", "set-pro", "dominique"])  # names match in any case
    assert made.exit_code == 0, made.output
    assert "now pro" in made.output
    assert _user(cli_env, "Dominique").is_pro is True
    again = runner.invoke(app, ["users", "set-pro", "Dominique"])
    assert again.exit_code == 0 and "already pro" in again.output

    unmade = runner.invoke(app, ["users", "unset-pro", dominique.public_id[:8]])
    assert unmade.exit_code == 0, unmade.output
    assert "no longer pro" in unmade.output
    assert _user(cli_env, "Dominique").is_pro is False
    assert _user(cli_env, "Camille").is_pro is True  # nobody else touched


def test_unknown_or_ambiguous_users_are_clear_errors(cli_env: str) -> None:
    _create("Camille")
    unknown = runner.invoke(app, ["users", "set-pro", "Nobody"])
    assert unknown.exit_code != 0
    assert "no user 'Nobody'" in unknown.output and "eko users list" in unknown.output

    _create("Sam")
    _create("Sam")
    twice = runner.invoke(app, ["users", "unset-pro", "Sam"])
    assert twice.exit_code != 0
    assert "more than one user" in twice.output
    assert len(re.findall(r"\b[0-9a-f]{32}\b", twice.output)) == 2  # both candidates shown


def test_create_migrates_a_new_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new install: no database file yet. `users list` says how to fix it; `users create`
    needs no separate step (like `eko serve` and `eko chat`, it applies the migrations)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EKO_HOME", str(tmp_path / "fresh-home"))
    monkeypatch.delenv("EKO_DATABASE_URL", raising=False)
    before = runner.invoke(app, ["users", "list"])
    assert before.exit_code != 0 and "not migrated" in before.output
    _create("Camille")
    assert (tmp_path / "fresh-home" / "eko.db").is_file()
    assert "Camille" in runner.invoke(app, ["users", "list"]).output


async def test_the_quick_start_user_chats_past_the_free_quota(
    cli_env: str, make_harness: Callable[..., Any]
) -> None:
    """The README's path: the first `eko users create` → its key → messages through the API.
    The operator's 9th message is answered; a member created after gets the paywall."""
    # In a thread: the CLI runs its own event loop, and this test is on pytest's.
    _, operator_key = await asyncio.to_thread(_create, "Camille")
    _, member_key = await asyncio.to_thread(_create, "Dominique")

    async with make_harness() as harness:

        async def ninth_reply_type(key: str) -> str:
            headers = {"Authorization": f"Bearer {key}"}
            room = await harness.direct_room(headers)
            reply_type = ""
            for number in range(1, 10):
                response = await harness.client.post(
                    f"/v1/rooms/{room}/messages",
                    json={"content": f"Message numéro {number} : parle-moi de la mer."},
                    headers=headers,
                )
                assert response.status_code in (200, 201), response.text
                reply_type = response.json()["assistant_message"]["type"]
            return reply_type

        assert await ninth_reply_type(operator_key) == "message"
        assert await ninth_reply_type(member_key) == "paywall"


def test_create_with_a_password_then_set_another(cli_env: str) -> None:
    from eko.accounts.passwords import Passwords

    result = runner.invoke(
        app, ["users", "create", "Camille", "--password"], input="un secret sûr\n"
    )
    assert result.exit_code == 0, result.output
    assert "signs in on the page as Camille" in result.output
    camille = _user(cli_env, "Camille")
    assert camille.login_name == "camille"
    passwords = Passwords()
    assert run_isolated(passwords.verify(camille.password_hash, "un secret sûr"))

    short = runner.invoke(app, ["users", "create", "Bob", "--password"], input="court\n")
    assert short.exit_code == 1 and "8 to 1000" in short.output
    taken = runner.invoke(
        app, ["users", "create", "CAMILLE", "--password"], input="un secret sûr\n"
    )
    assert taken.exit_code == 1 and "taken" in taken.output

    async def open_session(user_id: int) -> str:
        database = Database(cli_env)
        try:
            async with database.session() as session:
                token, _ = await session_repo.open_session(
                    session, user_id=user_id, ttl=timedelta(hours=1)
                )
                return token
        finally:
            await database.dispose()

    async def session_alive(token: str) -> bool:
        database = Database(cli_env)
        try:
            async with database.session() as session:
                return await session_repo.find_session(session, token=token) is not None
        finally:
            await database.dispose()

    token = run_isolated(open_session(camille.id))
    assert run_isolated(session_alive(token))
    changed = runner.invoke(app, ["users", "set-password", "Camille"], input="un autre secret\n")
    assert changed.exit_code == 0, changed.output
    assert not run_isolated(session_alive(token))  # signed out everywhere
    camille = _user(cli_env, "Camille")
    assert run_isolated(passwords.verify(camille.password_hash, "un autre secret"))
    assert not run_isolated(passwords.verify(camille.password_hash, "un secret sûr"))
