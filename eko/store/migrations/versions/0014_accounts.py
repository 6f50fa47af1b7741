"""Accounts in the browser: passwords, API keys, sessions, invitations, failed sign-ins

`users` gains `login_name` (case-folded, unique) and `password_hash` (argon2id). `api_keys`
holds every key of a user (several, each revocable); each user's existing key is copied into
it, named "initial", so every key in use keeps working. `users.api_key_hash` stays, as the
per-user secret that signs event tokens. `web_sessions` holds the page's signed-in cookies
(hashed), `invitations` the staff's one-time links, `signin_failures` the refused sign-ins the
rate limit counts (eko/store/account_models.py).

Revision ID: 0014
Revises: 0013
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Timestamp = sa.DateTime(timezone=True)


def _user_fk(ondelete: str) -> sa.ForeignKey:
    return sa.ForeignKey("users.id", ondelete=ondelete)


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("login_name", sa.String(100), nullable=True))
        batch.add_column(sa.Column("password_hash", sa.String(255), nullable=True))
        batch.create_unique_constraint("uq_users_login_name", ["login_name"])
    api_keys = op.create_table(
        "api_keys",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("public_id", sa.String(32), nullable=False, unique=True),
        sa.Column("user_id", BigId, _user_fk("CASCADE"), nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("prefix", sa.String(16), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("revoked_at", Timestamp, nullable=True),
    )
    op.create_index("ix_api_keys_user_id", "api_keys", ["user_id"])
    users = sa.table(
        "users",
        sa.column("id", BigId),
        sa.column("api_key_hash", sa.String(64)),
        sa.column("created_at", Timestamp),
    )
    connection = op.get_bind()
    rows = connection.execute(sa.select(users.c.id, users.c.api_key_hash, users.c.created_at))
    copied = [
        {
            "public_id": uuid.uuid4().hex,
            "user_id": user_id,
            "name": "initial",
            "key_hash": key_hash,
            "prefix": "eko_…",
            "created_at": created_at or datetime.now(UTC),
        }
        for user_id, key_hash, created_at in rows
    ]
    if copied:
        op.bulk_insert(api_keys, copied)
    op.create_table(
        "web_sessions",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("user_id", BigId, _user_fk("CASCADE"), nullable=False),
        sa.Column("csrf_token", sa.String(64), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("expires_at", Timestamp, nullable=False),
        sa.Column("revoked_at", Timestamp, nullable=True),
    )
    op.create_index("ix_web_sessions_user_id", "web_sessions", ["user_id"])
    op.create_index("ix_web_sessions_expires_at", "web_sessions", ["expires_at"])
    op.create_table(
        "invitations",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("public_id", sa.String(32), nullable=False, unique=True),
        sa.Column("created_by", BigId, _user_fk("SET NULL"), nullable=True),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("is_pro", sa.Boolean(), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("expires_at", Timestamp, nullable=False),
        sa.Column("used_at", Timestamp, nullable=True),
        sa.Column("used_by", BigId, _user_fk("SET NULL"), nullable=True),
    )
    op.create_table(
        "signin_failures",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("login_name", sa.String(100), nullable=False),
        sa.Column("address", sa.String(64), nullable=False),
        sa.Column("at", Timestamp, nullable=False),
    )
    op.create_index("ix_signin_failures_name", "signin_failures", ["login_name", "at"])
    op.create_index("ix_signin_failures_address", "signin_failures", ["address", "at"])


def downgrade() -> None:
    op.drop_index("ix_signin_failures_address", table_name="signin_failures")
    op.drop_index("ix_signin_failures_name", table_name="signin_failures")
    op.drop_table("signin_failures")
    op.drop_table("invitations")
    op.drop_index("ix_web_sessions_expires_at", table_name="web_sessions")
    op.drop_index("ix_web_sessions_user_id", table_name="web_sessions")
    op.drop_table("web_sessions")
    op.drop_index("ix_api_keys_user_id", table_name="api_keys")
    op.drop_table("api_keys")
    with op.batch_alter_table("users") as batch:
        batch.drop_constraint("uq_users_login_name", type_="unique")
        batch.drop_column("password_hash")
        batch.drop_column("login_name")
