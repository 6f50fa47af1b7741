"""`eko users create|list|set-pro|unset-pro|set-password`.

The first user of a fresh install is the operator: created staff and pro, so the quick start
leads to someone who can administer the server and is never paywalled. Everyone after that is
a member with the free-message quota unless `--staff` / `--pro` say otherwise. The page can
do the same without a terminal (the first visitor creates the operator); these commands stay
for scripts. `--password` reads the password from standard input (or asks twice on a
terminal): the user then also signs in on the page with their name.
"""

from __future__ import annotations

import getpass
import sys
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from eko.accounts.passwords import Passwords
from eko.cli.common import (
    DATABASE_FIX,
    console,
    database_read,
    fail,
    load_settings,
    open_database,
    run,
)
from eko.cli.ids import resolve_user
from eko.config import mask_url
from eko.store import users as user_repo
from eko.store import web_sessions as session_repo
from eko.store.models import User

app = typer.Typer(help="Create and list users; make them pro or not.", no_args_is_help=True)

UserArg = Annotated[str, typer.Argument(metavar="USER", help="Display name or public id.")]


@app.command("create")
def create(
    name: Annotated[str, typer.Argument(help="Display name.")],
    staff: Annotated[bool, typer.Option("--staff", help="Give the staff role.")] = False,
    pro: Annotated[bool, typer.Option("--pro", help="Mark as a pro (paying) user.")] = False,
    password: Annotated[
        bool,
        typer.Option(
            "--password", help="Also sign in on the page: read a password from stdin (or ask)."
        ),
    ] = False,
) -> None:
    """Create a user and print its API key (shown once). The first user is staff and pro."""
    if not name.strip() or len(name) > 100:
        fail("the name must be 1 to 100 characters")
    settings = load_settings()
    password_hash = _read_password_hash(settings.password_min_chars) if password else None

    async def go() -> tuple[User, str, bool]:
        from eko.store.migrate import upgrade  # Alembic: only for the command that needs it

        async with open_database(settings) as database:
            try:
                # Like `eko serve` and `eko chat`: a new install needs no separate step.
                await upgrade(database)
            except Exception as exc:
                fail(
                    f"cannot prepare the database {mask_url(settings.database_url)}: {exc}",
                    fix=DATABASE_FIX,
                )
            async with database.session() as session:
                first = not await user_repo.list_users(session, limit=1)
                if password_hash and await user_repo.get_by_login_name(session, name=name):
                    fail(f"the sign-in name {name.strip()!r} is taken", fix="choose another name")
                user, key = await user_repo.create_user(
                    session,
                    display_name=" ".join(name.split()),
                    role="staff" if staff or first else "member",
                    is_pro=pro or first,
                    free_quota_limit=settings.default_free_quota_limit,
                    password_hash=password_hash,
                )
                return user, key, first

    user, key, first = run(go())
    kind = ", ".join([user.role, *(["pro"] if user.is_pro else [])])
    console.print(
        f"created user [bold]{escape(user.display_name)}[/] ({kind}) id={user.public_id} "
        f"in {mask_url(settings.database_url)}"
    )
    if first:
        console.print(
            "the first user of this install is the operator: staff and pro (no free-message "
            "limit); later users are members unless --staff / --pro"
        )
    if password_hash:
        console.print(f"signs in on the page as {escape(user.display_name)} with that password")
    console.print("API key (shown once, store it now):")
    print(key)


def _read_password_hash(min_chars: int) -> str:
    """A password from stdin (scripts: its first line) or asked twice on a terminal, hashed."""
    if sys.stdin.isatty():
        given = getpass.getpass("password: ")
        if getpass.getpass("again: ") != given:
            fail("the two passwords differ")
    else:
        given = sys.stdin.readline().rstrip("\r\n")
    if not min_chars <= len(given) <= 1000:
        fail(f"a password has {min_chars} to 1000 characters")
    return Passwords().hash_now(given)


@app.command("set-password")
def set_password(user: UserArg) -> None:
    """Give a user a (new) password: read from stdin, or asked twice on a terminal. They sign
    in on the page with their display name; their open sessions end."""
    settings = load_settings()
    password_hash = _read_password_hash(settings.password_min_chars)

    async def go() -> User:
        async with database_read(settings) as database, database.session() as session:
            found = await resolve_user(session, user)
            taken = await user_repo.get_by_login_name(session, name=found.display_name)
            if taken is not None and taken.id != found.id:
                fail(f"the sign-in name {found.display_name!r} is taken by another user")
            found.login_name = user_repo.login_key(found.display_name)
            found.password_hash = password_hash
            # Signed out everywhere: whoever knew the old password keeps no session.
            await session_repo.revoke_user_sessions(session, user_id=found.id)
            return found

    found = run(go())
    console.print(
        f"{escape(found.display_name)} ({found.public_id}) signs in with the new password"
    )


@app.command("list")
def list_users() -> None:
    """List users: public id, name, role, pro, free messages used / limit (pro: unlimited)."""
    settings = load_settings()

    async def go() -> list[User]:
        async with database_read(settings) as database, database.session() as session:
            return list(await user_repo.list_users(session))

    users = run(go())
    table = Table(title=f"{len(users)} users")
    table.add_column("public id", no_wrap=True, min_width=32)
    for column in ("name", "role", "pro", "free used / limit"):
        table.add_column(column)
    for user in users:
        table.add_row(
            user.public_id,
            escape(user.display_name),
            user.role,
            "yes" if user.is_pro else "no",
            free_messages(user),
        )
    console.print(table)


def free_messages(user: User) -> str:
    """A pro user is never paywalled: their count is not a limit (#37)."""
    if user.is_pro:
        return "unlimited"
    return f"{user.free_quota_used} / {user.free_quota_limit}"


def _set_pro(given: str, is_pro: bool) -> None:
    settings = load_settings()

    async def go() -> tuple[User, bool]:
        async with database_read(settings) as database, database.session() as session:
            user = await resolve_user(session, given)
            changed = user.is_pro != is_pro
            user.is_pro = is_pro
            return user, changed

    user, changed = run(go())
    who = f"{escape(user.display_name)} ({user.public_id})"
    if is_pro:
        console.print(f"{who} is {'now' if changed else 'already'} pro")
    else:
        console.print(f"{who} {'is no longer' if changed else 'was not'} pro")


@app.command("set-pro")
def set_pro(user: UserArg) -> None:
    """Make a user pro: never paywalled, whatever their free messages used."""
    _set_pro(user, True)


@app.command("unset-pro")
def unset_pro(user: UserArg) -> None:
    """Make a user not pro: the free-message quota applies again."""
    _set_pro(user, False)
