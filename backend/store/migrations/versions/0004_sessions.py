"""Browser sessions kept on the server (backend/store/schema.py: sessions), so sign-out,
a password change and an admin end them.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sessions",
        sa.Column("id_hash", sa.String(64), primary_key=True),
        sa.Column("user", sa.String(200), nullable=False),
        sa.Column("password_mark", sa.String(64), nullable=False),
        sa.Column("address", sa.String(100), nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("seen_at", sa.Float, nullable=False),
    )
    op.create_index("ix_sessions_user", "sessions", ["user"])
    op.create_index("ix_sessions_seen_at", "sessions", ["seen_at"])


def downgrade() -> None:
    op.drop_table("sessions")
