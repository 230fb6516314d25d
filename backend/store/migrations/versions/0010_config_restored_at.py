"""When an execution put a booked config back (exec_configs.restored_at, the executor's
clock; NULL while it is set or for rows restored before this revision). A broker answers
DescribeConfigs from the config records it has applied, so for a short while after a
plan puts a config back a broker may still show the plan's value: the next plan booking
that key reads it again rather than take the plan's value for the cluster's own
(backend/executor/book.py).

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("exec_configs") as t:
        t.add_column(sa.Column("restored_at", sa.Float))


def downgrade() -> None:
    with op.batch_alter_table("exec_configs") as t:
        t.drop_column("restored_at")
