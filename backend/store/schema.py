"""The plan store's tables (SQLAlchemy Core): plans, decisions and the chained audit log.

Migrations in backend/store/migrations create exactly these; a test compares them.
Times are stored as timezone-aware UTC on both SQLite and PostgreSQL.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
)


class UTCDateTime(TypeDecorator):
    """A datetime that always comes back timezone-aware in UTC (SQLite keeps no zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the plan store: pass UTC-aware times")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


metadata = MetaData()

plans = Table(
    "plans", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("kind", String(16), nullable=False),
    Column("cluster", String(200), nullable=False),
    Column("title", String(500), nullable=False),
    Column("author", String(200), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("state", String(16), nullable=False),
    Column("content", JSON, nullable=False),
    Column("sha256", String(64), nullable=False),
    Column("basis", JSON, nullable=False),
    Column("preview", JSON, nullable=False),
    Column("throttle", BigInteger, nullable=True),
    Column("cancel_requested_at", UTCDateTime, nullable=True),
    Column("version", Integer, nullable=False),
    # the approval requirement its rule gave it at proposal (backend/store/approvals.py;
    # migration 0007); NULL: proposed before policies, one approval as always
    Column("approval", JSON, nullable=True),
    # {"mode": "adaptive", "floor": bytes/s} (migration 0009); NULL: the fixed throttle
    Column("throttle_mode", JSON, nullable=True),
    Index("ix_plans_cluster_state", "cluster", "state"),
    Index("ix_plans_state_expires", "state", "expires_at"),
)

decisions = Table(
    "decisions", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("plan_id", Integer, ForeignKey("plans.id"), nullable=False, index=True),
    Column("user", String(200), nullable=False),
    Column("decision", String(16), nullable=False),
    Column("comment", Text, nullable=False),
    Column("sha256", String(64), nullable=True),
    Column("at", UTCDateTime, nullable=False),
    Column("role", String(16), nullable=True),  # the user's role then (migration 0007)
)

audit = Table(
    "audit", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", UTCDateTime, nullable=False),
    Column("user", String(200), nullable=False),
    Column("action", String(64), nullable=False),
    Column("plan_id", Integer, nullable=True, index=True),
    Column("before", String(16), nullable=True),
    Column("after", String(16), nullable=True),
    Column("address", String(100), nullable=True),
    Column("detail", JSON, nullable=True),
    Column("digest", String(64), nullable=False),
    Column("prev_hash", String(64), nullable=False),
    Column("hash", String(64), nullable=False),
    # the audit key that signed the row (backend/store/audit_keys.py; migration 0005);
    # NULL: written before the keys, with the unkeyed hash
    Column("key_id", String(32), nullable=True),
    # HMAC of the row's id and hash under its key, written once the row has committed
    # (migration 0006); NULL on rows signed by 0005's keyed chain
    Column("seal", String(64), nullable=True),
    Index("ix_audit_user_at", "user", "at"),
)


# ---- the executor's tables (backend/executor; migration 0002_executor) ---------------------
# Times are seconds since the epoch from the clock the executor is given.

# One row per plan that was started: the frozen content it runs and where it is.
executions = Table(
    "executions", metadata,
    Column("plan_id", Integer, primary_key=True, autoincrement=False),
    Column("cluster", String(200), nullable=False, index=True),
    Column("state", String(16), nullable=False),  # see loop.STATES
    Column("sha256", String(64), nullable=False),
    Column("throttle", BigInteger),  # bytes/s, as frozen in the spec
    Column("batch", Integer, nullable=False, default=-1),  # current batch, -1 before the first
    Column("phase", String(16), nullable=False, default="idle"),  # idle | starting | running
    Column("attempts", Integer, nullable=False, default=0),  # failed tries of the current step
    Column("retry_at", Float),
    Column("error", Text),  # the last error, retried
    Column("cause", Text),  # why it failed, in words
    Column("requested_by", String(200)),
    Column("started_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("ended_at", Float),
    Column("partitions_total", Integer, nullable=False, default=0),
    Column("partitions_done", Integer, nullable=False, default=0),
    Column("bytes_total", BigInteger, nullable=False, default=0),
    Column("bytes_done", BigInteger, nullable=False, default=0),
    Column("version", Integer, nullable=False, default=0),  # fences a stale executor
    Column("hold", JSON),  # why a guard or a window holds it (migration 0008_guards)
)

# The frozen content an execution runs ({"reassignment": ..., "execution": spec}), apart
# from the execution row that changes at every step (a row update rewrites the row).
exec_content = Table(
    "exec_content", metadata,
    Column("plan_id", Integer, primary_key=True, autoincrement=False),
    Column("content", JSON, nullable=False),
)

# Progress per batch: started and finished times, partitions and bytes.
exec_batches = Table(
    "exec_batches", metadata,
    Column("plan_id", Integer, primary_key=True, autoincrement=False),
    Column("idx", Integer, primary_key=True),
    Column("state", String(16), nullable=False),  # pending | running | done | cancelled
    Column("partitions", Integer, nullable=False),
    Column("done", Integer, nullable=False, default=0),
    Column("bytes_total", BigInteger, nullable=False, default=0),
    Column("bytes_done", BigInteger, nullable=False, default=0),
    Column("started_at", Float),
    Column("ended_at", Float),
)

# The book: every config the executor changed, with the value it had before.
exec_configs = Table(
    "exec_configs", metadata,
    Column("plan_id", Integer, primary_key=True, autoincrement=False),
    Column("entity_type", String(8), primary_key=True),  # broker | topic
    Column("name", String(255), primary_key=True),
    Column("key", String(128), primary_key=True),
    Column("prior", Text),  # None: the key was not set before
    Column("value", Text, nullable=False),  # what the executor set
    Column("active", Boolean, nullable=False),  # set now (False once restored)
    Column("since", Float, nullable=False),
)

# ---- adaptive throttle (migration 0009_adaptive_throttle) ----------------------------------
# How a running reassignment's throttle is set now: "fixed" (the approved throttle) or
# "adaptive" (between the floor and the approved ceiling); switched by a user with the
# execute right. No row: as approved (the spec's throttle mode).
exec_throttle_mode = Table(
    "exec_throttle_mode", metadata,
    Column("plan_id", Integer, primary_key=True, autoincrement=False),
    Column("mode", String(8), nullable=False),  # fixed | adaptive
    Column("floor", BigInteger, nullable=True),  # bytes/s, adaptive only
    Column("changed_by", String(200), nullable=False),
    Column("changed_at", Float, nullable=False),
)

# The adaptive controller's looks: per broker the rates set and the traffic measured, the
# ETA at those rates, and a note (Prometheus not answering, a switch), one row a look.
exec_throttle_ticks = Table(
    "exec_throttle_ticks", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("plan_id", Integer, nullable=False, index=True),
    Column("at", Float, nullable=False),
    Column("mode", String(8), nullable=False),
    # {broker id: {"leader", "follower", "sent", "received"}} in bytes/s (sent/received:
    # replication traffic measured; null when Prometheus did not answer)
    Column("brokers", JSON, nullable=False),
    Column("eta_seconds", Float, nullable=True),
    Column("note", Text, nullable=True),
)

# One executor per cluster: the holder renews the lease; an expired lease is taken over.
exec_leases = Table(
    "exec_leases", metadata,
    Column("cluster", String(200), primary_key=True),
    Column("holder", String(200), nullable=False),
    Column("expires_at", Float, nullable=False),
    Column("heartbeat_at", Float, nullable=False),
)

# ---- throttle sightings (migration 0003_throttle_sightings) ---------------------------------
# Kafka does not record when a config was set: the first time Railyard saw each throttle
# config with its current value (epoch seconds), so the Overview can say "first seen at".
throttle_sightings = Table(
    "throttle_sightings", metadata,
    Column("cluster", String(200), primary_key=True),
    Column("entity_type", String(8), primary_key=True),  # broker | topic
    Column("name", String(255), primary_key=True),
    Column("key", String(128), primary_key=True),
    Column("value", Text, nullable=False),
    Column("first_seen", Float, nullable=False),
)

# ---- browser sessions (migration 0004_sessions) ---------------------------------------------
# One row per signed-in browser (auth: users). The cookie carries only a random id; the row
# is keyed by its sha256, so whoever reads the store cannot sign in with what is stored.
# Times are epoch seconds. Sign-out, a password change and an admin delete the row.
sessions = Table(
    "sessions", metadata,
    Column("id_hash", String(64), primary_key=True),
    Column("user", String(200), nullable=False, index=True),
    Column("password_mark", String(64), nullable=False),  # which password it signed in with
    Column("address", String(100), nullable=True),
    Column("created_at", Float, nullable=False),
    Column("seen_at", Float, nullable=False, index=True),
)
