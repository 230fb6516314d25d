"""Plans, decisions and the chained audit log.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

from backend.store.audit import AUDIT_LOCK, GENESIS
from backend.store.schema import UTCDateTime

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

# PostgreSQL chains each audit row inside its INSERT (see backend/store/audit.py): take the
# lock, then (a volatile function's statements each see what is committed by then) read
# the last row, number this one after it (no gaps), and hash it. Same formula as chain_hash.
CHAIN_FUNCTION = f"""
CREATE FUNCTION railyard_audit_chain() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE prev text; last_id integer;
BEGIN
    PERFORM pg_advisory_xact_lock({AUDIT_LOCK});
    SELECT id, hash INTO last_id, prev FROM audit ORDER BY id DESC LIMIT 1;
    NEW.id := coalesce(last_id, 0) + 1;
    NEW.prev_hash := coalesce(prev, '{GENESIS}');
    NEW.hash := encode(sha256(convert_to(NEW.prev_hash || NEW.digest, 'UTF8')), 'hex');
    RETURN NEW;
END
$$
"""


def upgrade() -> None:
    op.create_table(
        "plans",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("cluster", sa.String(200), nullable=False),
        sa.Column("title", sa.String(500), nullable=False),
        sa.Column("author", sa.String(200), nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("expires_at", UTCDateTime, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("content", sa.JSON, nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("basis", sa.JSON, nullable=False),
        sa.Column("preview", sa.JSON, nullable=False),
        sa.Column("throttle", sa.BigInteger, nullable=True),
        sa.Column("cancel_requested_at", UTCDateTime, nullable=True),
        sa.Column("version", sa.Integer, nullable=False),
    )
    op.create_index("ix_plans_cluster_state", "plans", ["cluster", "state"])
    op.create_index("ix_plans_state_expires", "plans", ["state", "expires_at"])
    op.create_table(
        "decisions",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("plan_id", sa.Integer, sa.ForeignKey("plans.id"), nullable=False),
        sa.Column("user", sa.String(200), nullable=False),
        sa.Column("decision", sa.String(16), nullable=False),
        sa.Column("comment", sa.Text, nullable=False),
        sa.Column("sha256", sa.String(64), nullable=True),
        sa.Column("at", UTCDateTime, nullable=False),
    )
    op.create_index("ix_decisions_plan_id", "decisions", ["plan_id"])
    op.create_table(
        "audit",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("at", UTCDateTime, nullable=False),
        sa.Column("user", sa.String(200), nullable=False),
        sa.Column("action", sa.String(64), nullable=False),
        sa.Column("plan_id", sa.Integer, nullable=True),
        sa.Column("before", sa.String(16), nullable=True),
        sa.Column("after", sa.String(16), nullable=True),
        sa.Column("address", sa.String(100), nullable=True),
        sa.Column("detail", sa.JSON, nullable=True),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("prev_hash", sa.String(64), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
    )
    op.create_index("ix_audit_plan_id", "audit", ["plan_id"])
    op.create_index("ix_audit_user_at", "audit", ["user", "at"])
    if op.get_bind().dialect.name == "postgresql":
        op.execute(CHAIN_FUNCTION)
        op.execute("CREATE TRIGGER audit_chain BEFORE INSERT ON audit FOR EACH ROW "
                   "EXECUTE FUNCTION railyard_audit_chain()")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS audit_chain ON audit")
        op.execute("DROP FUNCTION IF EXISTS railyard_audit_chain()")
    op.drop_table("audit")
    op.drop_table("decisions")
    op.drop_table("plans")
