"""The executor's tables: executions, their frozen content, their batches, the config
book and per-cluster leases (backend/store/schema.py).

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "executions",
        sa.Column("plan_id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("cluster", sa.String(200), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("throttle", sa.BigInteger),
        sa.Column("batch", sa.Integer, nullable=False),
        sa.Column("phase", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("retry_at", sa.Float),
        sa.Column("error", sa.Text),
        sa.Column("cause", sa.Text),
        sa.Column("requested_by", sa.String(200)),
        sa.Column("started_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.Column("ended_at", sa.Float),
        sa.Column("partitions_total", sa.Integer, nullable=False),
        sa.Column("partitions_done", sa.Integer, nullable=False),
        sa.Column("bytes_total", sa.BigInteger, nullable=False),
        sa.Column("bytes_done", sa.BigInteger, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
    )
    op.create_index("ix_executions_cluster", "executions", ["cluster"])
    op.create_table(
        "exec_content",
        sa.Column("plan_id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("content", sa.JSON, nullable=False),
    )
    op.create_table(
        "exec_batches",
        sa.Column("plan_id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("idx", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("partitions", sa.Integer, nullable=False),
        sa.Column("done", sa.Integer, nullable=False),
        sa.Column("bytes_total", sa.BigInteger, nullable=False),
        sa.Column("bytes_done", sa.BigInteger, nullable=False),
        sa.Column("started_at", sa.Float),
        sa.Column("ended_at", sa.Float),
    )
    op.create_table(
        "exec_configs",
        sa.Column("plan_id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("entity_type", sa.String(8), primary_key=True),
        sa.Column("name", sa.String(255), primary_key=True),
        sa.Column("key", sa.String(128), primary_key=True),
        sa.Column("prior", sa.Text),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("active", sa.Boolean, nullable=False),
        sa.Column("since", sa.Float, nullable=False),
    )
    op.create_table(
        "exec_leases",
        sa.Column("cluster", sa.String(200), primary_key=True),
        sa.Column("holder", sa.String(200), nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
        sa.Column("heartbeat_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    for table in ("exec_leases", "exec_configs", "exec_batches", "exec_content",
                  "executions"):
        op.drop_table(table)
