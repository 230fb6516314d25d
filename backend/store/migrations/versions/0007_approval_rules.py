"""Approval policies: each plan stores the requirement its rule gave it at proposal
(backend/store/approvals.py), and each decision the role its user had, so whether an
admin is among the approvers is read from the plan alone.

NULL: a plan (or a decision) from before, which needs one approval as it always did.

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("plans", sa.Column("approval", sa.JSON, nullable=True))
    op.add_column("decisions", sa.Column("role", sa.String(16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("decisions") as batch:
        batch.drop_column("role")
    with op.batch_alter_table("plans") as batch:
        batch.drop_column("approval")
