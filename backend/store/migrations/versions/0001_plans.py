"""Plans, decisions and the chained audit log.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

from backend.store.schema import UTCDateTime

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


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
        sa.Column("prev_hash", sa.String(64), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
    )
    op.create_index("ix_audit_plan_id", "audit", ["plan_id"])
    op.create_index("ix_audit_user_at", "audit", ["user", "at"])


def downgrade() -> None:
    op.drop_table("audit")
    op.drop_table("decisions")
    op.drop_table("plans")
