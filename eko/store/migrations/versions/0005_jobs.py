"""jobs: the in-process runner's tables; procrastinate's schema on PostgreSQL

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Timestamp = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("args", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("priority", sa.Integer(), nullable=False),
        sa.Column("lock", sa.String(200), nullable=True),
        sa.Column("queueing_lock", sa.String(200), nullable=True),
        sa.Column("room_id", sa.String(32), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("deferrals", sa.Integer(), nullable=False),
        sa.Column("max_attempts", sa.Integer(), nullable=False),
        sa.Column("run_at", Timestamp, nullable=False),
        sa.Column("worker_id", sa.String(32), nullable=True),
        sa.Column("heartbeat_at", Timestamp, nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("started_at", Timestamp, nullable=True),
        sa.Column("finished_at", Timestamp, nullable=True),
    )
    op.create_index("ix_jobs_status_run_at", "jobs", ["status", "run_at"])
    op.create_index("ix_jobs_lock", "jobs", ["lock"])
    op.create_index("ix_jobs_room", "jobs", ["room_id"])
    op.create_index(
        "uq_jobs_queueing_lock_queued",
        "jobs",
        ["queueing_lock"],
        unique=True,
        sqlite_where=sa.text("status = 'queued'"),
        postgresql_where=sa.text("status = 'queued'"),
    )
    op.create_table(
        "job_schedules",
        sa.Column("name", sa.String(100), primary_key=True),
        sa.Column("last_window", Timestamp, nullable=False),
        sa.Column("updated_at", Timestamp, nullable=False),
    )
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        from eko.store.procrastinate_schema import apply_procrastinate_schema

        apply_procrastinate_schema(bind)


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        from eko.store.procrastinate_schema import drop_procrastinate_schema

        drop_procrastinate_schema(bind)
    op.drop_table("job_schedules")
    op.drop_index("uq_jobs_queueing_lock_queued", table_name="jobs")
    op.drop_index("ix_jobs_room", table_name="jobs")
    op.drop_index("ix_jobs_lock", table_name="jobs")
    op.drop_index("ix_jobs_status_run_at", table_name="jobs")
    op.drop_table("jobs")
