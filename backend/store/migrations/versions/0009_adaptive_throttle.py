"""Adaptive throttle (issue 28): a plan's approved throttle mode (in its sha256), the mode
a running reassignment is switched to, and the adaptive controller's looks (the rates it
set, the traffic it measured, the ETA), for the plan page's chart.

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("plans", sa.Column("throttle_mode", sa.JSON(), nullable=True))
    op.create_table(
        "exec_throttle_mode",
        sa.Column("plan_id", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("mode", sa.String(8), nullable=False),
        sa.Column("floor", sa.BigInteger(), nullable=True),
        sa.Column("changed_by", sa.String(200), nullable=False),
        sa.Column("changed_at", sa.Float(), nullable=False),
    )
    op.create_table(
        "exec_throttle_ticks",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("plan_id", sa.Integer(), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.Column("mode", sa.String(8), nullable=False),
        sa.Column("brokers", sa.JSON(), nullable=False),
        sa.Column("eta_seconds", sa.Float(), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
    )
    op.create_index("ix_exec_throttle_ticks_plan_id", "exec_throttle_ticks", ["plan_id"])


def downgrade() -> None:
    op.drop_index("ix_exec_throttle_ticks_plan_id", "exec_throttle_ticks")
    op.drop_table("exec_throttle_ticks")
    op.drop_table("exec_throttle_mode")
    with op.batch_alter_table("plans") as batch:
        batch.drop_column("throttle_mode")
