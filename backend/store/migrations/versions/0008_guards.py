"""Why an execution is held (backend/executor/guards.py): a guard condition breached or
outside the cluster's execution windows, with what was seen and since when
(executions.hold, JSON; NULL when it is not held).

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("executions") as t:
        t.add_column(sa.Column("hold", sa.JSON))


def downgrade() -> None:
    with op.batch_alter_table("executions") as t:
        t.drop_column("hold")
