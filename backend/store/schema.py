"""The plan store's tables (SQLAlchemy Core): plans, decisions and the chained audit log.

Migrations in backend/store/migrations create exactly these; a test compares them.
Times are stored as timezone-aware UTC on both SQLite and PostgreSQL.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    DateTime,
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
    Index("ix_audit_user_at", "user", "at"),
)
