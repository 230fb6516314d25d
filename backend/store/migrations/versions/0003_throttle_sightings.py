"""When Railyard first saw each replication throttle config (backend/store/schema.py:
throttle_sightings), for the Overview's leftover throttles.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "throttle_sightings",
        sa.Column("cluster", sa.String(200), primary_key=True),
        sa.Column("entity_type", sa.String(8), primary_key=True),
        sa.Column("name", sa.String(255), primary_key=True),
        sa.Column("key", sa.String(128), primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("first_seen", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("throttle_sightings")
