"""procrastinate's schema, applied by Eko's own migrations on PostgreSQL.

procrastinate ships its schema as one SQL script (functions, triggers, enum types). asyncpg
refuses a multi-statement script through a prepared statement (`op.execute`), so the script
runs through the raw asyncpg connection's simple-query protocol, inside the migration's
transaction. Its tables are not Eko models: autogenerate and the schema test skip them
(`is_job_queue_object`).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Connection

# Every object procrastinate creates is named with this prefix.
PROCRASTINATE_PREFIX = "procrastinate_"


def is_job_queue_object(name: str | None) -> bool:
    return bool(name) and str(name).startswith(PROCRASTINATE_PREFIX)


def schema_sql() -> str:
    from procrastinate.schema import SchemaManager

    return str(SchemaManager.get_schema())


def run_script(connection: Connection, script: str) -> None:
    """Run a multi-statement SQL script on a migration's (sync-adapted) asyncpg connection."""
    from sqlalchemy.util import await_only

    raw: Any = connection.connection.driver_connection  # asyncpg.Connection
    await_only(raw.execute(script))


# procrastinate wakes workers (NOTIFY) when a job is inserted, not when one finishes: a job
# waiting for its lock (the next job of the same room) would wait for the next poll. This
# trigger wakes them when a locked job leaves "doing", so a room's jobs follow each other at
# notification speed. The payload is procrastinate's own "job_inserted" shape.
WAKE_LOCK_WAITERS = """
CREATE FUNCTION eko_wake_lock_waiters_v1() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify(
        'procrastinate_any_queue_v1',
        json_build_object('type', 'job_inserted', 'job_id', NEW.id)::text
    );
    RETURN NEW;
END;
$$;
CREATE TRIGGER eko_wake_lock_waiters_v1
    AFTER UPDATE OF status ON procrastinate_jobs
    FOR EACH ROW
    WHEN (OLD.status = 'doing' AND NEW.status <> 'doing' AND NEW.lock IS NOT NULL)
    EXECUTE PROCEDURE eko_wake_lock_waiters_v1();
"""


def apply_procrastinate_schema(connection: Connection) -> None:
    run_script(connection, schema_sql())
    run_script(connection, WAKE_LOCK_WAITERS)


DROP_PROCRASTINATE = """
DO $$
DECLARE r record;
BEGIN
    FOR r IN SELECT tablename FROM pg_tables
             WHERE schemaname = current_schema() AND tablename LIKE 'procrastinate\\_%' LOOP
        EXECUTE format('DROP TABLE IF EXISTS %I CASCADE', r.tablename);
    END LOOP;
    FOR r IN SELECT p.oid::regprocedure AS signature FROM pg_proc p
             JOIN pg_namespace n ON n.oid = p.pronamespace
             WHERE n.nspname = current_schema() AND p.proname LIKE 'procrastinate\\_%' LOOP
        EXECUTE format('DROP FUNCTION IF EXISTS %s CASCADE', r.signature);
    END LOOP;
    FOR r IN SELECT t.typname FROM pg_type t
             JOIN pg_namespace n ON n.oid = t.typnamespace
             WHERE n.nspname = current_schema() AND t.typname LIKE 'procrastinate\\_%'
               AND t.typtype IN ('e', 'c') LOOP
        EXECUTE format('DROP TYPE IF EXISTS %I CASCADE', r.typname);
    END LOOP;
END $$;
"""


def drop_procrastinate_schema(connection: Connection) -> None:
    run_script(connection, DROP_PROCRASTINATE)  # the trigger goes with its table
    run_script(connection, "DROP FUNCTION IF EXISTS eko_wake_lock_waiters_v1()")
